// The audit log (audit_log, audit_head): appends under the head's row lock, pages, and the rows in order for a proof.
import type { AuditRecordBody } from '../../domain/audit-record.js';
import type { Queryable } from '../pool.js';

/** A stored record: the fields its hash covers, its place and its link to the record before it. */
export interface AuditRow extends AuditRecordBody {
  seq: string;
  prev_hash: string;
  hash: string;
}

// `seq` leaves as text (a bigint beyond JavaScript's safe integers stays exact); ORDER BY names the column as
// audit_log.seq, since a bare `seq` would sort the text alias (10 before 2).
const COLUMNS = 'seq::text AS seq, at, actor, actor_role, action, targets, details, peer, outcome, prev_hash, hash';

/** The last sequence number and hash, locked until the caller's transaction ends: appends go one at a time. */
export async function lockAuditHead(db: Queryable): Promise<{ seq: bigint; hash: string }> {
  const { rows } = await db.query<{ seq: string; hash: string }>('SELECT seq::text AS seq, hash FROM audit_head FOR UPDATE');
  return { seq: BigInt(rows[0]!.seq), hash: rows[0]!.hash };
}

/** Inserts the record that follows the locked head, and moves the head onto it. */
export async function insertAuditRecord(db: Queryable, row: Omit<AuditRow, 'seq'> & { seq: bigint }): Promise<void> {
  await db.query(
    `WITH record AS (
       INSERT INTO audit_log (seq, at, actor, actor_role, action, targets, details, peer, outcome, prev_hash, hash)
       VALUES ($1::bigint, $2, $3, $4, $5, $6::text[], $7::jsonb, $8, $9, $10, $11) RETURNING seq, hash
     )
     UPDATE audit_head SET seq = record.seq, hash = record.hash FROM record`,
    [row.seq.toString(), row.at, row.actor, row.actor_role, row.action, row.targets, JSON.stringify(row.details), row.peer, row.outcome, row.prev_hash, row.hash],
  );
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  target?: string;
  /** Records before this sequence number (a page's cursor). */
  before?: bigint;
  limit: number;
}

/** Records newest first, filtered. */
export async function listAuditRecords(db: Queryable, filter: AuditFilter): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditRow>(
    `SELECT ${COLUMNS} FROM audit_log
      WHERE ($1::text IS NULL OR actor = $1) AND ($2::text IS NULL OR action = $2)
        AND ($3::text IS NULL OR targets @> ARRAY[$3::text]) AND ($4::bigint IS NULL OR seq < $4::bigint)
      ORDER BY audit_log.seq DESC LIMIT $5`,
    [filter.actor ?? null, filter.action ?? null, filter.target ?? null, filter.before?.toString() ?? null, filter.limit],
  );
  return rows;
}

/** Records in sequence order from `after`, a page at a time (a proof walks the whole log in bounded memory). */
export async function listAuditRecordsAfter(db: Queryable, after: bigint, limit: number): Promise<AuditRow[]> {
  const { rows } = await db.query<AuditRow>(`SELECT ${COLUMNS} FROM audit_log WHERE seq > $1::bigint ORDER BY audit_log.seq LIMIT $2`, [after.toString(), limit]);
  return rows;
}

/** The head, and the last record hashed without the key with its seal (decision 186). */
export async function readAuditHead(db: Queryable): Promise<{ seq: bigint; hash: string; unkeyedThrough: bigint; unkeyedSeal: string | null }> {
  const { rows } = await db.query<{ seq: string; hash: string; unkeyed_through: string; unkeyed_seal: string | null }>(
    'SELECT seq::text AS seq, hash, unkeyed_through::text AS unkeyed_through, unkeyed_seal FROM audit_head',
  );
  const head = rows[0]!;
  return { seq: BigInt(head.seq), hash: head.hash, unkeyedThrough: BigInt(head.unkeyed_through), unkeyedSeal: head.unkeyed_seal };
}

/** Stores the seal of the unkeyed records' boundary (migration 098's own transaction). */
export async function updateUnkeyedSeal(db: Queryable, seal: string): Promise<void> {
  await db.query('UPDATE audit_head SET unkeyed_seal = $1', [seal]);
}

/** The hashes of the records with these sequence numbers (those that exist), by sequence number as text. */
export async function readAuditHashes(db: Queryable, seqs: readonly bigint[]): Promise<Map<string, string>> {
  const { rows } = await db.query<{ seq: string; hash: string }>('SELECT seq::text AS seq, hash FROM audit_log WHERE seq = ANY($1::bigint[])', [
    seqs.map(String),
  ]);
  return new Map(rows.map((r) => [r.seq, r.hash]));
}
