// The proof of the audit log (decisions 102, 186, 187): walks the whole log in order on one snapshot and checks each
// record's link to the one before it and its hash (under AUDIT_KEY from the first keyed record on), the head, then the
// facts kept outside the database: the heads an operator expects (`--expect SEQ:HASH`) and the anchor file's lines.
// The key proves that no record was changed; only an outside fact proves that none was cut off the end.
import type { Queryable } from '../../db/pool.js';
import { withReadSnapshot } from '../../db/pool.js';
import { readAuditHashes, readAuditHead, listAuditRecordsAfter } from '../../db/queries/audit.js';
import { auditRecordHash, GENESIS_HASH, unkeyedSeal } from '../../domain/audit-record.js';
import { AUDIT_VERIFY_PAGE_ROWS } from '../../bounds.js';
import type { AuditDeps } from './audit.js';
import { anchorBytes, readAnchor, type AnchorLine } from './audit-anchor.js';

/** A record the log must still hold at its place, e.g. a head printed by `audit head --json` and kept elsewhere. */
export type AuditExpectation = AnchorLine;

export type AuditProof =
  | {
      ok: true;
      records: number;
      /** Records written before the key existed (decision 186): checked with plain SHA-256, they prove less. */
      unkeyed_records: number;
      expectations: number;
      /** The anchor file's lines checked, the last record they name, and the lines skipped as unreadable; null: no file. */
      anchor: { lines: number; latest_seq: string | null; unreadable: number } | null;
    }
  | { ok: false; records: number; seq: string; problem: string };

type Broken = Extract<AuditProof, { ok: false }>;

export async function verifyAudit(deps: AuditDeps, expectations: readonly AuditExpectation[] = []): Promise<AuditProof> {
  const file = deps.config.audit.anchorFile;
  // Measured before the snapshot: a line in the file by then was written after its record committed, so the
  // snapshot holds that record. Lines appended later may name records the snapshot does not see.
  const bytes = file === null ? 0 : await anchorBytes(file);
  return withReadSnapshot(deps.pool, async (db) => {
    const chain = await verifyChain(db, deps.config.audit.key);
    if (!chain.ok) return chain;
    const expected = await checkExpectations(db, chain.records, expectations);
    if (expected !== null) return expected;
    let anchor: { lines: number; latest_seq: string | null; unreadable: number } | null = null;
    if (file !== null) {
      const checked = await checkAnchor(db, chain.records, file, bytes);
      if ('problem' in checked) return checked;
      anchor = checked;
    }
    return { ok: true, records: chain.records, unkeyed_records: chain.unkeyed, expectations: expectations.length, anchor };
  });
}

async function verifyChain(db: Queryable, key: string): Promise<Broken | { ok: true; records: number; unkeyed: number }> {
  const head = await readAuditHead(db);
  let expectedSeq = 1n;
  let prevHash = GENESIS_HASH;
  let records = 0;
  let unkeyed = 0;
  for (;;) {
    const page = await listAuditRecordsAfter(db, expectedSeq - 1n, AUDIT_VERIFY_PAGE_ROWS);
    for (const row of page) {
      const seq = BigInt(row.seq);
      const broken = (problem: string): Broken => ({ ok: false, records, seq: row.seq, problem });
      if (seq !== expectedSeq) return broken(`record ${expectedSeq} is missing (the next one is ${seq})`);
      if (row.prev_hash !== prevHash) return broken('it does not follow the record before it (removed or reordered records)');
      // Records written before the key existed (migration 098) were hashed without it; every later one with it.
      const keyed = seq > head.unkeyedThrough;
      if (auditRecordHash(keyed ? key : null, seq, row.prev_hash, row) !== row.hash) {
        return broken(keyed ? 'its contents do not match its hash under AUDIT_KEY (altered, or hashed without this key)' : 'its contents do not match its hash (altered)');
      }
      // The last unkeyed record: the boundary must carry the key's seal, or whoever wrote the database moved it.
      if (seq === head.unkeyedThrough && head.unkeyedSeal !== unkeyedSeal(key, seq, row.hash)) {
        return broken(`records 1 to ${seq} are marked as written before AUDIT_KEY, but the mark is not sealed under this key (moved by whoever wrote the database)`);
      }
      prevHash = row.hash;
      expectedSeq += 1n;
      records += 1;
      if (!keyed) unkeyed += 1;
    }
    if (page.length < AUDIT_VERIFY_PAGE_ROWS) break;
  }
  if (head.unkeyedThrough > expectedSeq - 1n) {
    return { ok: false, records, seq: head.unkeyedThrough.toString(), problem: `records 1 to ${head.unkeyedThrough} are marked as written before AUDIT_KEY, but the log ends at record ${expectedSeq - 1n}` };
  }
  if (head.seq !== expectedSeq - 1n || head.hash !== prevHash) {
    return { ok: false, records, seq: head.seq.toString(), problem: `the log ends at record ${expectedSeq - 1n}, but ${head.seq} were written (records removed at the end)` };
  }
  return { ok: true, records, unkeyed };
}

/** The lowest of `lines` that the log (`records` long, its chain already proved) no longer holds as it was, or null. */
async function firstMismatch(db: Queryable, records: number, lines: readonly AnchorLine[], source: string): Promise<Broken | null> {
  const present = await readAuditHashes(db, lines.map((l) => l.seq));
  for (const line of [...lines].sort((a, b) => (a.seq < b.seq ? -1 : a.seq > b.seq ? 1 : 0))) {
    const seq = line.seq.toString();
    const hash = line.seq === 0n ? GENESIS_HASH : present.get(seq);
    // The chain is proved up to the end, so every record before this one verified.
    const before = Math.min(records, Number(line.seq) - 1);
    if (hash === undefined) return { ok: false, records: before, seq, problem: `${source} names it, but the log ends at record ${records} (records removed at the end)` };
    if (hash !== line.hash) return { ok: false, records: before, seq, problem: `its hash is not the one ${source} names (${line.hash}): the log was rewritten from here on` };
  }
  return null;
}

async function checkExpectations(db: Queryable, records: number, expectations: readonly AuditExpectation[]): Promise<Broken | null> {
  return expectations.length === 0 ? null : firstMismatch(db, records, expectations, 'the expected head');
}

async function checkAnchor(db: Queryable, records: number, file: string, bytes: number): Promise<Broken | { lines: number; latest_seq: string | null; unreadable: number }> {
  const seen: { lines: number; latest: bigint | null; first: Broken | null } = { lines: 0, latest: null, first: null };
  const { unreadable } = await readAnchor(file, bytes, AUDIT_VERIFY_PAGE_ROWS, async (batch) => {
    seen.lines += batch.length;
    for (const line of batch) if (seen.latest === null || line.seq > seen.latest) seen.latest = line.seq;
    const mismatch = await firstMismatch(db, records, batch, 'the anchor file');
    if (mismatch !== null && (seen.first === null || BigInt(mismatch.seq) < BigInt(seen.first.seq))) seen.first = mismatch;
  });
  if (seen.first !== null) return seen.first;
  return { lines: seen.lines, latest_seq: seen.latest === null ? null : seen.latest.toString(), unreadable };
}
