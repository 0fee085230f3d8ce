// The locked re-check every execution step makes before it writes: each payment locked (in id order, so two batches
// lock shared rows in the same order), then, in a statement of its own (one that waited for those locks would read the
// other tables as they were before the wait), whether the run still holds the payment's lease and which transfer is
// live. What the step decides from these facts is pure (src/domain/execution.ts).
import type { Queryable } from '../../../db/pool.js';
import type { AttemptRow } from '../../../db/queries/attempts.js';
import { lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { readLeasesAndLive } from '../../../db/queries/leases.js';
import type { RecheckFacts } from '../../../domain/execution.js';
import { intentIdOf, type ExecutionRun } from './run.js';

export interface Rechecked {
  intent: PaymentIntentRow | null;
  facts: RecheckFacts;
  live: AttemptRow | null;
}

/**
 * The re-check's facts of each (payment, run), in input order; `lockAttempts` also locks each live transfer. A payment
 * asked about twice in one batch is its first run's: the later one finds it gone (null), as it would after the first
 * one's write.
 */
export async function lockForRecheck(
  tx: Queryable,
  runs: readonly ExecutionRun[],
  options: { lockAttempts: boolean },
): Promise<Rechecked[]> {
  const ids = runs.map(intentIdOf);
  const intents = await lockIntents(tx, ids);
  const leases = await readLeasesAndLive(tx, runs.map((run, i) => ({ intentId: ids[i]!, runId: run.runId })), { lockAttempts: options.lockAttempts });
  const seen = new Set<string>();
  return ids.map((id, i) => {
    const intent = seen.has(id) ? null : (intents.get(id) ?? null);
    seen.add(id);
    const { holdsLease, live } = leases[i]!;
    const liveStatus = live?.status === 'signed' || live?.status === 'broadcasted' ? live.status : null;
    return { intent, live, facts: { status: intent?.status ?? null, holdsLease, liveId: live?.id ?? null, liveStatus } };
  });
}
