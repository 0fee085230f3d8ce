// Every creation of a process goes through one group commit (src/db/group-commit.ts): concurrent creations share a
// reservation transaction (reserve-batch.ts), and the treasury row is locked once per batch instead of once per
// request (decision 133).
import { GroupCommit, perPool } from '../../db/group-commit.js';
import type { AppContext } from '../context.js';
import { reserveBatch, type CreateIntentResult, type ReservationRequest } from './reserve-batch.js';

/** Most creations in one transaction: bounds the lock hold time and the statement sizes. */
export const MAX_BATCH = 64;

type Deps = Pick<AppContext, 'pool' | 'clock' | 'boss' | 'log' | 'config'>;

// One per pool: the context that first creates a pool's batcher lends it its clock, queue and logger, which are the
// same for every context of a process.
const batcherOf = perPool<{ batcher?: GroupCommit<ReservationRequest, CreateIntentResult> }>(() => ({}));

export function reservationsOf(deps: Deps): GroupCommit<ReservationRequest, CreateIntentResult> {
  const slot = batcherOf(deps.pool);
  slot.batcher ??= new GroupCommit(
    async (requests) => (await reserveBatch(deps, requests)).map((o) => (o.ok ? { ok: true, value: o.result } : { ok: false, error: o.error })),
    MAX_BATCH,
    (error, items) => deps.log.warn({ err: error, size: items.length }, 'reservation batch failed; retrying its requests one by one'),
  );
  return slot.batcher;
}
