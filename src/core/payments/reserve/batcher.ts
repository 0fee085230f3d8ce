// Every creation of a process goes through one group commit (src/db/group-commit.ts): concurrent creations share a
// reservation transaction (reserve-batch.ts), and the treasury row is locked once per batch instead of once per
// request (decision 133). Built by the runtime with the process's context (src/core/group-commits.ts).
import { RESERVATION_BATCH_MAX } from '../../../bounds.js';
import { GroupCommit } from '../../../db/group-commit.js';
import type { AppContext } from '../../context.js';
import { reserveBatch, type CreateIntentResult, type ReservationRequest } from './reserve-batch.js';

export type ReservationBatcher = GroupCommit<ReservationRequest, CreateIntentResult>;

export function createReservationBatcher(deps: Pick<AppContext, 'pool' | 'clock' | 'boss' | 'log' | 'config'>): ReservationBatcher {
  return new GroupCommit(
    async (requests) => (await reserveBatch(deps, requests)).map((o) => (o.ok ? { ok: true, value: o.result } : { ok: false, error: o.error })),
    RESERVATION_BATCH_MAX,
    (error, items) => deps.log.warn({ err: error, size: items.length }, 'reservation batch failed; retrying its requests one by one'),
  );
}
