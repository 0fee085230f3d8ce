// NOTIFY after commit. PostgreSQL takes one cluster-wide lock when a transaction that has notified commits, and keeps
// it until the commit is flushed to disk: notifying transactions commit one at a time and never share a WAL flush.
// With a notice in every status change, every step of every payment queued there. So the transactions of
// withTransaction collect their notices and send them once they have committed, in one statement shared with the
// notices of the other transactions that committed meanwhile (a transaction without writes has nothing to flush, so
// it holds that lock only for an instant). A rollback sends nothing. A crash between the commit and the send loses
// the notice: notices are hints that wake a listener early, never the record, and every listener also polls or
// re-reads (decision 52).
import type pg from 'pg';
import { GroupCommit } from './group-commit.js';
import type { Pool, Queryable } from './pool.js';
import { NOTICE_BATCH_MAX } from '../bounds.js';

export interface Notice {
  channel: string;
  payload: string;
}

/**
 * The channel of the facts the api caches (notice-cache.ts): migration 069's triggers notify it of their tables, and
 * a posting to the balances quotes decide from notifies it too (notifyFactChanged); the payload is the topic.
 */
export const FACTS_CHANNEL = 'stableroute_facts';

export type FactTopic = 'balances' | 'health' | 'policies';

/** The notices of each open transaction of withTransaction, by its client. */
const pending = new WeakMap<object, Notice[]>();

/** The notices of a pool's committed transactions, sent together in one statement (created with the pool). */
export type NoticeSender = GroupCommit<Notice[], void>;

export function createNoticeSender(pool: Pick<pg.Pool, 'query'>): NoticeSender {
  return new GroupCommit<Notice[], void>(async (batches) => {
    const unique = new Map(batches.flat().map((n) => [`${n.channel}\u0000${n.payload}`, n]));
    const notices = [...unique.values()];
    await pool.query('SELECT pg_notify(c, p) FROM unnest($1::text[], $2::text[]) AS n(c, p)', [
      notices.map((n) => n.channel),
      notices.map((n) => n.payload),
    ]);
    return batches.map(() => ({ ok: true as const, value: undefined }));
  }, NOTICE_BATCH_MAX);
}

/**
 * Notifies `channel` of each payload when the transaction `db` is part of commits. Outside a transaction of
 * withTransaction (the pool, or a client its owner drives), the notices go out in `db`'s own statement at once, and
 * are then as transactional as that client's work.
 */
export async function notifyAfterCommit(db: Queryable, channel: string, payloads: readonly string[]): Promise<void> {
  if (payloads.length === 0) return;
  const list = pending.get(db);
  if (list) {
    for (const payload of payloads) list.push({ channel, payload });
    return;
  }
  await db.query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [channel, payloads]);
}

/** Tells every process's fact cache, once `db`'s transaction commits, that `topic` changed. */
export async function notifyFactChanged(db: Queryable, topic: FactTopic): Promise<void> {
  await notifyAfterCommit(db, FACTS_CHANNEL, [topic]);
}

/** withTransaction's side: a transaction starts collecting its notices. */
export function collectNotices(client: object): void {
  pending.set(client, []);
}

/**
 * withTransaction's side: the transaction ended. Committed: its notices go out, without the caller waiting for them
 * (a failed send is lost like any hint). Rolled back: they are dropped.
 */
export function endNotices(pool: Pool, client: object, committed: boolean): void {
  const notices = pending.get(client);
  pending.delete(client);
  if (!committed || !notices || notices.length === 0) return;
  pool.notices.submit(notices).catch(() => undefined);
}
