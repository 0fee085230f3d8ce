// The locked re-check every execution step makes before it writes: the intent is still being broadcast, this run
// still holds its lease, and its live attempt is the one the run asked the chain about.
import type { Queryable } from '../../db/pool.js';
import { leaseAndLiveAttempt, leasesAndLive } from '../../db/queries/attempts.js';
import { findIntent, lockIntents, type PaymentIntentRow } from '../../db/queries/intents.js';
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

/**
 * lockLive for many runs that have no live attempt yet (about to sign), in two statements: the intents locked in id
 * order, then, in a statement of its own (one that waited for those locks would read the other tables as they were
 * before the wait), the leases and live attempts. In input order, CHANGED where lockLive would answer it.
 */
export async function lockLiveToSign(
  tx: Queryable,
  requests: readonly { runId: string; intentId: string }[],
): Promise<(PaymentIntentRow | typeof CHANGED)[]> {
  const intents = await lockIntents(tx, requests.map((r) => r.intentId));
  const facts = await leasesAndLive(tx, requests);
  return requests.map((r, i) => {
    const intent = intents.get(r.intentId);
    const { holdsLease, live } = facts[i]!;
    return !intent || intent.status !== 'broadcasting' || !holdsLease || live !== null ? CHANGED : intent;
  });
}
