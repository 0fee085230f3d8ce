// The audit log (decision 102): who did what, to what, from where, with what outcome. A record is appended in the
// transaction of the action it records (no action without its record, no record of an action that rolled back); a
// refusal of an identified operator is recorded in a transaction of its own. Records are hash-chained under AUDIT_KEY,
// a secret kept out of the database, and each committed record's `seq hash` line goes to AUDIT_ANCHOR_FILE when one
// is set (decisions 186, 187); verifyAudit (audit-verify.ts) proves that none was altered, removed or reordered.
import type pg from 'pg';
import type { Config } from '../../config.js';
import { afterCommit } from '../../db/after-commit.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { readAuditHashes, readAuditHead, insertAuditRecord, listAuditRecords, lockAuditHead, type AuditFilter, type AuditRow } from '../../db/queries/audit.js';
import type { Actor } from '../../domain/actor.js';
import { auditRecordHash, GENESIS_HASH, storableDetails, storableText, unkeyedSeal } from '../../domain/audit-record.js';
import type { MigrationSteps } from '../../db/migrate.js';
import { updateUnkeyedSeal } from '../../db/queries/audit.js';
import { anchorLine, appendAnchorLine } from './audit-anchor.js';

export type { AuditRow, AuditFilter };

export interface AuditEntry {
  actor: Actor;
  /** e.g. `withdrawal.create`, `payment.resolve`. */
  action: string;
  /** Ids the action is about (payment, withdrawal, merchant, operator, webhook event). */
  targets: string[];
  /** The request's meaningful fields; never a secret (secret-looking keys are redacted all the same). */
  details: Record<string, unknown>;
}

/** What appending a record needs of the configuration: the key and the anchor file. */
export type AuditConfig = Pick<Config, 'audit'>;
/** What an audited action needs: the pool its transaction runs on, and the audit settings. */
export interface AuditDeps {
  pool: Pool;
  config: AuditConfig;
}

/** Appends one record on the caller's transaction (the action's own). `outcome`: `ok`, or `refused:<CODE>`. */
export async function appendAudit(config: AuditConfig, tx: Queryable, entry: AuditEntry, outcome: string, at: Date): Promise<void> {
  const head = await lockAuditHead(tx);
  const seq = head.seq + 1n;
  // Every field as PostgreSQL stores it, so the hash covers exactly what a proof reads back.
  const row = {
    at: new Date(at.getTime()),
    actor: storableText(entry.actor.id),
    actor_role: entry.actor.role,
    action: storableText(entry.action),
    targets: entry.targets.map(storableText),
    details: storableDetails(entry.details),
    peer: entry.actor.peer === null ? null : storableText(entry.actor.peer),
    outcome: storableText(outcome),
  };
  const hash = auditRecordHash(config.audit.key, seq, head.hash, row);
  await insertAuditRecord(tx, { ...row, seq, prev_hash: head.hash, hash });
  const file = config.audit.anchorFile;
  // Only once committed: a rolled-back record's sequence number is taken again by the next one, with another hash.
  if (file !== null) await afterCommit(tx, () => appendAnchorLine(file, anchorLine(seq, hash)));
}

/**
 * What migration 098 needs of the key: the boundary it sets between the records written before the key and after it,
 * sealed under the key in the migration's own transaction, so that nobody without the key can move it (decision 186).
 */
export function auditMigrationSteps(config: AuditConfig): MigrationSteps {
  return {
    '098_audit_key.sql': async (client) => {
      const { unkeyedThrough } = await readAuditHead(client);
      const last = unkeyedThrough === 0n ? GENESIS_HASH : (await readAuditHashes(client, [unkeyedThrough])).get(unkeyedThrough.toString());
      if (last === undefined) throw new Error(`audit record ${unkeyedThrough} is missing: run audit verify on the previous version`);
      await updateUnkeyedSeal(client, unkeyedSeal(config.audit.key, unkeyedThrough, last));
    },
  };
}

/** Runs an action's transaction with its audit record in it. */
export async function audited<T>(deps: AuditDeps, entry: AuditEntry, at: Date, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(deps.pool, async (tx) => {
    const result = await fn(tx);
    await appendAudit(deps.config, tx, entry, 'ok', at);
    return result;
  });
}

/** Records that an identified operator was refused (the action itself rolled back and left nothing). */
export async function auditRefusal(deps: AuditDeps, entry: AuditEntry, code: string, at: Date): Promise<void> {
  await withTransaction(deps.pool, (tx) => appendAudit(deps.config, tx, entry, `refused:${code}`, at));
}

export async function auditRecords(db: Queryable, filter: AuditFilter): Promise<AuditRow[]> {
  return listAuditRecords(db, filter);
}

/** The last record's sequence number (text: exact beyond 2^53) and hash: what an operator anchors outside. */
export async function currentAuditHead(db: Queryable): Promise<{ seq: string; hash: string }> {
  const head = await readAuditHead(db);
  return { seq: head.seq.toString(), hash: head.hash };
}
