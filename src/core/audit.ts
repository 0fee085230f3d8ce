// The audit log (decision 102): who did what, to what, from where, with what outcome. A record is appended in the
// transaction of the action it records (no action without its record, no record of an action that rolled back); a
// refusal of an identified operator is recorded in a transaction of its own. Records are hash-chained; verifyAudit
// proves that none was altered, removed or reordered.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { withReadSnapshot, withTransaction, type Pool, type Queryable } from '../db/pool.js';
import { auditHead, auditRecordsAfter, insertAuditRecord, listAuditRecords, lockAuditHead, type AuditFilter, type AuditRow } from '../db/queries/audit.js';
import type { Actor } from '../domain/actor.js';

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

/** Records a proof reads at once. */
const VERIFY_PAGE_ROWS = 1000;
const GENESIS_HASH = '0'.repeat(64);
const SECRET_KEYS = /token|secret|password|passphrase|authorization|private|^pin$|^api_key$|^key$/i;

/** JSON with keys sorted at every level: the same record always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Details as stored: secret-looking keys redacted, bigints and non-integers as strings (they survive jsonb exactly). */
function storable(value: unknown, key = ''): unknown {
  if (key !== '' && SECRET_KEYS.test(key)) return '[redacted]';
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : String(value);
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map((v) => storable(v));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).map(([k, v]) => [k, storable(v, k)]));
  }
  return value ?? null;
}

function recordHash(seq: bigint, prevHash: string, row: Pick<AuditRow, 'at' | 'actor' | 'actor_role' | 'action' | 'targets' | 'details' | 'peer' | 'outcome'>): string {
  const body = canonical({
    at: row.at.toISOString(),
    actor: row.actor,
    actor_role: row.actor_role,
    action: row.action,
    targets: row.targets,
    details: row.details,
    peer: row.peer,
    outcome: row.outcome,
  });
  return createHash('sha256').update(`${seq}\n${prevHash}\n${body}`).digest('hex');
}

/** Appends one record on the caller's transaction (the action's own). `outcome`: `ok`, or `refused:<CODE>`. */
export async function appendAudit(tx: Queryable, entry: AuditEntry, outcome: string, at: Date): Promise<void> {
  const head = await lockAuditHead(tx);
  const seq = head.seq + 1n;
  const row = {
    at: new Date(at.getTime()),
    actor: entry.actor.id,
    actor_role: entry.actor.role,
    action: entry.action,
    targets: entry.targets,
    details: storable(entry.details) as Record<string, unknown>,
    peer: entry.actor.peer,
    outcome,
  };
  await insertAuditRecord(tx, { ...row, seq, prev_hash: head.hash, hash: recordHash(seq, head.hash, row) });
}

/** Runs an action's transaction with its audit record in it. */
export async function audited<T>(pool: Pool, entry: AuditEntry, at: Date, fn: (tx: pg.PoolClient) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (tx) => {
    const result = await fn(tx);
    await appendAudit(tx, entry, 'ok', at);
    return result;
  });
}

/** Records that an identified operator was refused (the action itself rolled back and left nothing). */
export async function auditRefusal(pool: Pool, entry: AuditEntry, code: string, at: Date): Promise<void> {
  await withTransaction(pool, (tx) => appendAudit(tx, entry, `refused:${code}`, at));
}

export async function auditRecords(db: Queryable, filter: AuditFilter): Promise<AuditRow[]> {
  return listAuditRecords(db, filter);
}

export type AuditProof = { ok: true; records: number } | { ok: false; records: number; seq: string; problem: string };

/** Walks the whole log in order, a page at a time, on one snapshot, and checks every link of the chain and the head. */
export async function verifyAudit(pool: Pool): Promise<AuditProof> {
  return withReadSnapshot(pool, verifyChain);
}

async function verifyChain(db: Queryable): Promise<AuditProof> {
  let expectedSeq = 1n;
  let prevHash = GENESIS_HASH;
  let records = 0;
  for (;;) {
    const page = await auditRecordsAfter(db, expectedSeq - 1n, VERIFY_PAGE_ROWS);
    for (const row of page) {
      const seq = BigInt(row.seq);
      const broken = (problem: string): AuditProof => ({ ok: false, records, seq: row.seq, problem });
      if (seq !== expectedSeq) return broken(`record ${expectedSeq} is missing (the next one is ${seq})`);
      if (row.prev_hash !== prevHash) return broken('it does not follow the record before it (removed or reordered records)');
      if (recordHash(seq, row.prev_hash, row) !== row.hash) return broken('its contents do not match its hash (altered)');
      prevHash = row.hash;
      expectedSeq += 1n;
      records += 1;
    }
    if (page.length < VERIFY_PAGE_ROWS) break;
  }
  const head = await auditHead(db);
  if (head.seq !== expectedSeq - 1n || head.hash !== prevHash) {
    return { ok: false, records, seq: head.seq.toString(), problem: `the log ends at record ${expectedSeq - 1n}, but ${head.seq} were written (records removed at the end)` };
  }
  return { ok: true, records };
}
