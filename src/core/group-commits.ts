// The group commits of a process, kept only where independent HTTP requests meet: concurrent creations share a
// reservation transaction (decision 133), quotes created together share one INSERT, and the API keys of concurrent
// requests are looked up by one query (decision 136). The fourth, the notices sent after commit, belongs to its pool
// (src/db/notify.ts). Built once by the runtime and held by the AppContext, so each runs with that context's clock,
// queue and logger; the workers' steps take their batches whole instead (src/core/payments/execute, src/core/payments/confirm).
import type { AppContext } from './context.js';
import { createKeyLookups, type KeyLookups } from './merchants/merchants.js';
import { createQuoteWriter, type QuoteWriter } from './payments/quotes.js';
import { createReservationBatcher, type ReservationBatcher } from './payments/reserve/batcher.js';

export interface GroupCommits {
  reservations: ReservationBatcher;
  quotes: QuoteWriter;
  keyLookups: KeyLookups;
}

export function createGroupCommits(deps: Pick<AppContext, 'pool' | 'clock' | 'boss' | 'log' | 'config'>): GroupCommits {
  return { reservations: createReservationBatcher(deps), quotes: createQuoteWriter(deps.pool), keyLookups: createKeyLookups(deps.pool) };
}
