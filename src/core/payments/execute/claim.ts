// The claim every execution round starts with, for a whole batch of runs in one transaction: the intents locked in id
// order and what the claims decide from read in one statement (prefetch), a pure decision per run in the order the runs
// came (src/domain/execution.ts: a second run of one payment reads what the first one's claim left), then the leases
// and the moves route_selected or retrying -> broadcasting (with their events) written for all of them in a fixed
// number of statements. A payment that would be signed on a chain whose signing is held (decision 199) is not claimed:
// its job comes back later; the signature transaction checks again (sign.ts), this only spares the chain's reads.
import { BOOKS_HOLD_RECHECK_SECONDS } from '../../../bounds.js';
import { withBatchTransaction, type Queryable } from '../../../db/pool.js';
import { readHeldChains } from '../../../db/queries/books.js';
import type { ItemOutcome } from '../../../db/group-commit.js';
import type { AttemptRow } from '../../../db/queries/attempts.js';
import { lockIntents, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { readExecutionFacts, upsertLeases } from '../../../db/queries/leases.js';
import { decideClaim, factsAfterClaim, type ClaimDecision, type ClaimFacts } from '../../../domain/execution.js';
import { enqueueRetry } from '../../../jobs/queue.js';
import { moveAndTell } from '../outcomes/events.js';
import { intentIdOf, type ExecutionDeps, type ExecutionRun } from './run.js';

export type Done = { kind: 'done'; why: string };

/** What the claim found, for the steps that follow it outside any lock. */
export interface Claimed {
  kind: 'claimed';
  intent: PaymentIntentRow;
  /** A transfer signed by an earlier run whose send had an unknown outcome (timeout, crash). */
  live: AttemptRow | null;
  /** Prepared in a transaction of its own: an on-chain batch that paid it could not land (ExecutionFacts.alone). */
  alone: boolean;
}

/** Claims each run's payment; a claim that throws because of its payment fails that run alone. */
export async function claimRuns(deps: ExecutionDeps, runs: readonly ExecutionRun[]): Promise<ItemOutcome<Claimed | Done>[]> {
  return withBatchTransaction(
    deps.pool,
    runs,
    async (tx, batch) => {
      const now = deps.clock.now();
      const ids = batch.map(intentIdOf);
      // 1. Prefetch: the intents under their locks, then (a statement of its own, after the locks) what a claim reads.
      const intents = await lockIntents(tx, ids);
      const rows = await readExecutionFacts(tx, ids);
      const held = await readHeldChains(tx, [...new Set([...intents.values()].map((i) => i.selected_chain))]);
      // 2. Decide, run after run.
      const facts = new Map<string, ClaimFacts>();
      const deferred = new Map<string, ExecutionRun>();
      const decisions = batch.map((run): ClaimDecision => {
        const id = intentIdOf(run);
        const row = rows.get(id)!;
        const intent = intents.get(id);
        const before = facts.get(id) ?? {
          status: intents.get(id)?.status ?? null,
          retries: row.retries,
          awaitsApproval: row.awaitsApproval,
          lease: row.lease,
          liveStatus: row.live?.status === 'broadcasted' ? 'broadcasted' : row.live ? 'signed' : null,
        };
        const decision = decideClaim(before, run.job.attempt, run.runId);
        // Nothing signed yet and its chain held: it would only be signed, so it waits, unclaimed.
        if (decision.kind === 'claim' && row.live === null && intent && held.has(intent.selected_chain)) {
          deferred.set(id, run);
          return { kind: 'done', why: 'the chain\u2019s signing is held; the job comes back later' };
        }
        facts.set(id, decision.kind === 'claim' ? factsAfterClaim(before, decision, run.runId) : before);
        return decision;
      });
      // 3. Persist.
      await writeClaims(deps, tx, batch, decisions, intents, rows, now);
      for (const run of deferred.values()) await enqueueRetry(deps.boss, tx, run.job, BOOKS_HOLD_RECHECK_SECONDS);
      return batch.map((run, i): Claimed | Done => {
        const decision = decisions[i]!;
        if (decision.kind === 'done') return decision;
        if (decision.alreadyBroadcast) return { kind: 'done', why: 'already broadcast' };
        const id = intentIdOf(run);
        const { live, alone } = rows.get(id)!;
        return { kind: 'claimed', intent: intents.get(id)!, live, alone };
      });
    },
    (error, batch) => deps.log.warn({ err: error, size: batch.length }, 'claim batch failed; claiming its payments one by one'),
  );
}

/**
 * The claims' writes: each run's lease, the payments that were not broadcasting yet moved there (a payment waiting for
 * its first run, or retried; no live run of it can hold a lease), and those whose transfer an earlier run already sent
 * moved on to broadcasted, each with the event telling its merchant.
 */
async function writeClaims(
  deps: ExecutionDeps,
  tx: Queryable,
  runs: readonly ExecutionRun[],
  decisions: readonly ClaimDecision[],
  intents: Map<string, PaymentIntentRow>,
  rows: Awaited<ReturnType<typeof readExecutionFacts>>,
  now: Date,
): Promise<void> {
  const claims = runs.flatMap((run, i) => {
    const decision = decisions[i]!;
    return decision.kind === 'claim' ? [{ run, decision, intent: intents.get(intentIdOf(run))! }] : [];
  });
  await upsertLeases(
    tx,
    claims.map(({ run, decision }) => ({
      intentId: intentIdOf(run),
      owner: run.runId,
      attempt: decision.attempt,
      seconds: deps.config.executionLeaseSeconds,
      takeovers: decision.takeovers,
    })),
  );
  await moveAndTell(
    tx,
    claims.filter((c) => c.decision.toBroadcasting).map(({ intent }) => ({ intent, to: 'broadcasting', type: 'payment.broadcasting' })),
    now,
  );
  await moveAndTell(
    tx,
    claims
      .filter((c) => c.decision.alreadyBroadcast)
      .map(({ intent }) => ({ intent, to: 'broadcasted', type: 'payment.broadcasted', extra: { tx_id: rows.get(intent.id)!.live!.tx_id } })),
    now,
  );
}
