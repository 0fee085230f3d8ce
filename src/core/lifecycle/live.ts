// The locked re-check every execution step makes before it writes: the intent is still being broadcast, this run
// still holds its lease, and its live attempt is the one the run asked the chain about.
import type { Queryable } from '../../db/pool.js';
import { leaseAndLiveAttempt } from '../../db/queries/attempts.js';
import { findIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import { CHANGED } from './deps.js';

/**
 * Locks the intent and answers it if it is still broadcasting with `liveId` as its live attempt (null: none) and the
 * run `runId` still holds the lease; otherwise another run or an operator moved it on: CHANGED.
 */
export async function lockLive(tx: Queryable, runId: string, intentId: string, liveId: string | null): Promise<PaymentIntentRow | typeof CHANGED> {
  const intent = await findIntent(tx, intentId, { forUpdate: true });
  if (!intent || intent.status !== 'broadcasting') return CHANGED;
  const { holdsLease, live } = await leaseAndLiveAttempt(tx, intent.id, runId, { forUpdate: true });
  // Another run took the lease over (this one was presumed dead): it decides now; our next claim finds out.
  if (!holdsLease) return CHANGED;
  if ((live?.id ?? null) !== liveId || (live && live.status !== 'signed')) return CHANGED;
  return intent;
}
