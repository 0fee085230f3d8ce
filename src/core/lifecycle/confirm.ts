// Confirmation: a round looks at every broadcast attempt the worker watches. It asks each chain about all of them in
// as few calls as the node allows (getStatuses), decides what each verdict means without a lock, and only where
// something changes locks, re-checks and persists: pending_confirmation, settled, failed or manual_review. The chain
// is never asked under a lock. Locks are taken intent first, then attempt (the order every writer uses), and skipped
// when another transaction holds either: a round never waits on, or deadlocks with, an execution run or an operator.
import type { ChainAdapter } from '../../chains/port.js';
import { withSessionLockIfFree, withTransaction } from '../../db/pool.js';
import {
  findAttemptForUpdate,
  lockAttemptsIfFree,
  markConfirmed,
  markConfirmedMany,
  markFailed,
  markIncluded,
  markIncludedMany,
  openAttempts,
  replacedAttempts,
  signedOf,
  type AttemptRow,
  type OpenAttempt,
} from '../../db/queries/attempts.js';
import { changeStatus, changeStatuses, findIntentIfFree, lockIntents, type StatusChange } from '../../db/queries/intents.js';
import { CHAINS, type Chain } from '../../domain/chain.js';
import { decideConfirmation, type ConfirmationAction } from '../../domain/confirmation.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { transferVerdict, type TransferVerdict } from '../../domain/transfer-verdict.js';
import type { Metrics } from '../../metrics/registry.js';
import type { LifecycleDeps } from '../context.js';
import { moveAndTell } from './events.js';
import { failByCancel, failOnChain, postFee, settleIntent, settlementOf } from './outcomes.js';
import { postMany } from '../../ledger/store.js';
import { CONFIRMATION_PAGE_ATTEMPTS, CONFIRMATION_WRITE_BATCH_MAX, CONFIRMATION_WRITE_LANES } from '../../bounds.js';

export type ConfirmationDeps = Pick<LifecycleDeps, 'pool' | 'clock' | 'adapters' | 'log'> & {
  config: Pick<LifecycleDeps['config'], 'stuckAfterSeconds'>;
  /** Settlement timings are observed here, once the settlement has committed. */
  metrics?: Pick<Metrics, 'creationToSettlement' | 'finalityToSettlement'>;
};

/** Intent statuses whose broadcast attempt is watched (manual review included: the chain may still decide). */
export const WATCHED: readonly PaymentStatus[] = ['broadcasted', 'pending_confirmation', 'manual_review'];
/** Attempts persisted at once, each in its own short transaction (the verdicts not written in batches). */
const PARALLEL_WRITES = 8;
/** The verdicts written for many attempts in one transaction, and how many at most in one. */
const BATCHED: readonly ConfirmationAction['kind'][] = ['settle', 'pending_confirmation', 'wait'];
/** One round at a time across processes: a second worker skips a round another is running. */
const ROUND_LOCK = 7_340_213_001;

export interface ConfirmationSummary {
  /** Attempts whose verdict changed something (or was re-sent). */
  checked: number;
  settled: number;
  failed: number;
  manualReview: number;
  /** Open attempts looked at this round. */
  seen: number;
}

type Outcome = ConfirmationAction['kind'] | null;

/** One round over every open attempt. Returns what it did; a chain that cannot be asked is logged and skipped. */
export async function confirmRound(deps: ConfirmationDeps): Promise<ConfirmationSummary> {
  const summary: ConfirmationSummary = { checked: 0, settled: 0, failed: 0, manualReview: 0, seen: 0 };
  const ran = await withSessionLockIfFree(deps.pool, ROUND_LOCK, async () => {
    for (let afterId = ''; ; ) {
      const page = await openAttempts(deps.pool, WATCHED, afterId, CONFIRMATION_PAGE_ATTEMPTS);
      if (page.length === 0) break;
      afterId = page.at(-1)!.id;
      summary.seen += page.length;
      await confirmPage(deps, page, summary);
      if (page.length < CONFIRMATION_PAGE_ATTEMPTS) break;
    }
  });
  if (!ran) deps.log.debug('confirmation: another process is running a round');
  return summary;
}

async function confirmPage(deps: ConfirmationDeps, page: readonly OpenAttempt[], summary: ConfirmationSummary): Promise<void> {
  const work: Work[] = [];
  for (const chain of CHAINS) {
    const attempts = page.filter((a) => a.chain === chain);
    if (attempts.length === 0) continue;
    let statuses;
    try {
      statuses = await deps.adapters[chain].getStatuses(attempts.map(signedOf));
    } catch (error) {
      deps.log.error({ err: error, chain }, 'confirmation: the chain could not be asked; trying again next round');
      continue;
    }
    attempts.forEach((attempt, i) => work.push({ attempt, verdict: transferVerdict(statuses[i]!, { chain }) }));
  }
  // Decided once without a lock: only an attempt whose verdict changes something is locked and written. The common
  // writes (settled, pending_confirmation, included) are made for many attempts in one transaction; the rest (a
  // failure, a stuck transfer, a re-send) each in its own, as is anything a batch finds decided otherwise under lock.
  const now = deps.clock.now();
  const batched: Work[] = [];
  const alone: Work[] = [];
  for (const item of work) {
    const kind = expectedAction(deps, item.attempt, item.verdict, now);
    if (kind === null) continue;
    (BATCHED.includes(kind) && item.verdict.kind !== 'cannot_land' ? batched : alone).push(item);
  }
  const chunks = Array.from({ length: Math.ceil(batched.length / CONFIRMATION_WRITE_BATCH_MAX) }, (_, i) => batched.slice(i * CONFIRMATION_WRITE_BATCH_MAX, (i + 1) * CONFIRMATION_WRITE_BATCH_MAX));
  await drainWith(CONFIRMATION_WRITE_LANES, chunks, async (chunk) => {
    try {
      const done = await applyVerdicts(deps, chunk);
      done.outcomes.forEach((outcome) => count(summary, outcome));
      alone.push(...done.alone);
    } catch (error) {
      deps.log.error({ err: error, size: chunk.length }, 'confirmation: batch failed; its attempts are checked one by one');
      alone.push(...chunk);
    }
  });
  await drainWith(PARALLEL_WRITES, alone, async (next) => {
    try {
      count(summary, await applyVerdict(deps, next.attempt, next.verdict));
    } catch (error) {
      deps.log.error({ err: error, attempt_id: next.attempt.id }, 'confirmation: check failed; will retry next round');
    }
  });
}

/** Runs `fn` over `items` (taken from the front as they go), `n` at a time. */
async function drainWith<T>(n: number, items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      for (let next = items.shift(); next !== undefined; next = items.shift()) await fn(next);
    }),
  );
}

type Work = { attempt: OpenAttempt; verdict: TransferVerdict };

/** What the chain's verdict means for an attempt of an intent in `intentStatus` (decideConfirmation, pure). */
function decide(deps: ConfirmationDeps, intentStatus: PaymentStatus, attempt: AttemptRow, verdict: TransferVerdict, now: Date): ConfirmationAction {
  const broadcastAt = attempt.broadcast_at ?? attempt.created_at;
  return decideConfirmation({ intentStatus, purpose: attempt.purpose, verdict, broadcastAt, now, stuckAfterSeconds: deps.config.stuckAfterSeconds });
}

/** What a verdict would do to its attempt as read without a lock; null when it writes nothing. */
function expectedAction(deps: ConfirmationDeps, attempt: OpenAttempt, verdict: TransferVerdict, now: Date): ConfirmationAction['kind'] | null {
  const action = decide(deps, attempt.intent_status, attempt, verdict, now);
  return action.kind !== 'wait' || (verdict.kind === 'included' && attempt.included_at === null) ? action.kind : null;
}

/**
 * The common verdicts of many attempts in one transaction: the intents and attempts no one else holds are locked
 * (skipped otherwise, as applyVerdict does, so a batch never waits), re-checked and decided as applyVerdict would; the
 * settlements, inclusions and status changes written in a fixed number of statements. An attempt decided otherwise
 * under the lock is handed back (`alone`) for applyVerdict.
 */
async function applyVerdicts(deps: ConfirmationDeps, items: readonly Work[]): Promise<{ outcomes: Outcome[]; alone: Work[] }> {
  const settlements: { chain: Chain; createdAt: Date; at: Date; finalAt: Date | undefined }[] = [];
  const result = await withTransaction(deps.pool, async (tx) => {
    settlements.length = 0;
    const intents = await lockIntents(tx, items.map((i) => i.attempt.payment_intent_id), { skipLocked: true });
    const attempts = await lockAttemptsIfFree(
      tx,
      items.filter((i) => intents.has(i.attempt.payment_intent_id)).map((i) => i.attempt.id),
    );
    const now = deps.clock.now();
    const confirmed: { attemptId: string; feeNative: bigint }[] = [];
    const included: string[] = [];
    const changes: StatusChange[] = [];
    const entries: Parameters<typeof postMany>[1][number][] = [];
    const outcomes: Outcome[] = [];
    const alone: Work[] = [];
    const seen = new Set<string>();
    for (const item of items) {
      const intent = intents.get(item.attempt.payment_intent_id);
      const attempt = attempts.get(item.attempt.id);
      if (!intent || !WATCHED.includes(intent.status)) continue; // held by another transaction, or it moved on
      if (!attempt || attempt.status !== 'broadcasted' || attempt.payment_intent_id !== intent.id) continue;
      if (seen.has(intent.id)) {
        alone.push(item);
        continue;
      }
      seen.add(intent.id);
      const { verdict } = item;
      const decided = decide(deps, intent.status, attempt, verdict, now);
      if (decided.kind === 'settle') {
        const settlement = settlementOf(intent, attempt, decided.feeNative, now);
        confirmed.push({ attemptId: attempt.id, feeNative: decided.feeNative });
        changes.push(settlement.change);
        entries.push(...settlement.entries);
        settlements.push({ chain: attempt.chain, createdAt: intent.created_at, at: now, finalAt: verdict.kind === 'final' ? verdict.finalAt : undefined });
      } else if (decided.kind === 'pending_confirmation') {
        included.push(attempt.id);
        changes.push({ intent, to: 'pending_confirmation' });
      } else if (decided.kind === 'wait') {
        if (verdict.kind === 'included') included.push(attempt.id);
      } else {
        alone.push(item);
        continue;
      }
      outcomes.push(decided.kind);
    }
    await markConfirmedMany(tx, confirmed, now);
    await markIncludedMany(tx, included, now);
    await changeStatuses(tx, changes, now);
    await postMany(tx, entries);
    return { outcomes, alone };
  });
  for (const s of settlements) observeSettlement(deps, s.chain, s);
  if (settlements.length > 0) deps.log.info({ settled: settlements.length }, 'confirmation: settled');
  return result;
}

function count(summary: ConfirmationSummary, outcome: Outcome): void {
  if (outcome === null) return;
  summary.checked++;
  if (outcome === 'settle') summary.settled++;
  if (outcome === 'fail' || outcome === 'cancelled') summary.failed++;
  if (outcome === 'manual_review') summary.manualReview++;
}

/** A replaced attempt of the same intent that the chain reports final, or still able to land. */
type Sibling = { attempt: AttemptRow; feeNative: bigint } | 'pending' | null;

/** What the chain says about the fee-bumped predecessors of a failed attempt: one of them may be the payout. */
async function landedSibling(adapter: ChainAdapter, siblings: readonly AttemptRow[]): Promise<Sibling> {
  if (siblings.length === 0) return null;
  const statuses = await adapter.getStatuses(siblings.map(signedOf));
  for (const [i, attempt] of siblings.entries()) {
    const verdict = transferVerdict(statuses[i]!, { chain: attempt.chain });
    if (verdict.kind === 'final') return { attempt, feeNative: verdict.feeNative };
    if (verdict.kind === 'included' || verdict.kind === 'pending') return 'pending';
  }
  return null;
}

/**
 * Acts on what the chain said about `seen`: locks the intent and the attempt (skipping them when held), re-checks
 * that the attempt is still the broadcast one of a watched intent, decides and persists. Returns what was done, or
 * null when the attempt was not this call's to handle.
 */
async function applyVerdict(deps: ConfirmationDeps, seen: AttemptRow, verdict: TransferVerdict): Promise<Outcome> {
  const intentId = seen.payment_intent_id;
  const adapter = deps.adapters[seen.chain];
  const sibling = verdict.kind === 'cannot_land' ? await landedSibling(adapter, await replacedAttempts(deps.pool, intentId, seen.id)) : null;
  const log = deps.log.child({ payment_intent_id: intentId, attempt_id: seen.id, tx_id: seen.tx_id });

  /** What a committed settlement is timed from. */
  let settlement: { createdAt: Date; at: Date; finalAt: Date | undefined } | null = null;
  const action = await withTransaction(deps.pool, async (tx): Promise<Outcome> => {
    settlement = null;
    const intent = await findIntentIfFree(tx, intentId); // null: another worker or an operator has it, or it is gone
    if (!intent || !WATCHED.includes(intent.status)) return null; // it moved on
    const attempt = await findAttemptForUpdate(tx, seen.id, true);
    // A replacement by an operator turns this attempt 'replaced': then what the chain said is about another transfer.
    if (!attempt || attempt.status !== 'broadcasted' || attempt.payment_intent_id !== intent.id) return null;
    const now = deps.clock.now();
    const decided = decide(deps, intent.status, attempt, verdict, now);
    switch (decided.kind) {
      case 'settle':
        await markConfirmed(tx, attempt.id, decided.feeNative, now);
        await settleIntent(tx, intent, attempt, decided.feeNative, now);
        settlement = { createdAt: intent.created_at, at: now, finalAt: verdict.kind === 'final' ? verdict.finalAt : undefined };
        log.info('confirmation: settled');
        break;
      case 'fail':
        // A fee-bumped replacement shares its nonce with the attempt it replaced: if this one failed because the
        // other landed, the payment happened through the other.
        if (sibling === 'pending') return 'wait';
        if (sibling) {
          await markFailed(tx, attempt.id, decided.reason, `superseded by ${sibling.attempt.tx_id}`, decided.feeNative, 'replaced');
          await postFee(tx, intent, decided.feeNative, now); // nothing when it never landed, as a nonce shared with a final transfer implies
          await markConfirmed(tx, sibling.attempt.id, sibling.feeNative, now);
          await settleIntent(tx, intent, sibling.attempt, sibling.feeNative, now);
          settlement = { createdAt: intent.created_at, at: now, finalAt: undefined };
          log.info({ settled_by: sibling.attempt.tx_id }, 'confirmation: settled by the replaced transaction');
          return 'settle';
        }
        await failOnChain(tx, intent, attempt.id, decided, now);
        log.warn({ reason: decided.reason }, 'confirmation: failed');
        break;
      case 'cancelled':
        await failByCancel(tx, intent, attempt.id, decided.feeNative, now);
        log.warn('confirmation: the cancel on chain is final; failed, funds released');
        break;
      case 'pending_confirmation':
        await markIncluded(tx, attempt.id, now);
        intent.status = await changeStatus(tx, intent, 'pending_confirmation', now);
        break;
      case 'manual_review':
        await moveAndTell(tx, intent, 'manual_review', 'payment.manual_review', now, {
          tx_id: attempt.tx_id,
          stuck_since: (attempt.broadcast_at ?? attempt.created_at).toISOString(),
        }, 'stuck');
        log.warn('confirmation: stuck, moved to manual review');
        break;
      case 'resend':
      case 'wait':
        if (verdict.kind === 'included') await markIncluded(tx, attempt.id, now);
        break;
    }
    return decided.kind;
  });
  if (settlement) observeSettlement(deps, seen.chain, settlement);
  if (action === 'resend') {
    // The node forgot or never got the bytes; sending them again, after the commit, is harmless and may unstick it.
    await adapter.broadcast(signedOf(seen)).catch((error: unknown) => log.warn({ err: error }, 'confirmation: re-send failed'));
  }
  return action;
}

function observeSettlement(deps: ConfirmationDeps, chain: Chain, s: { createdAt: Date; at: Date; finalAt: Date | undefined }): void {
  const seconds = (from: Date) => Math.max(0, (s.at.getTime() - from.getTime()) / 1000);
  deps.metrics?.creationToSettlement.observe({ chain }, seconds(s.createdAt));
  if (s.finalAt) deps.metrics?.finalityToSettlement.observe({ chain }, seconds(s.finalAt));
}

/** Chains whose head moved since `last` (updated in place); a chain that cannot be asked counts as unmoved. */
export async function chainsThatMoved(deps: Pick<ConfirmationDeps, 'adapters' | 'log'>, last: Map<Chain, string>): Promise<Chain[]> {
  const moved: Chain[] = [];
  await Promise.all(
    CHAINS.map(async (chain) => {
      try {
        const head = await deps.adapters[chain].head();
        if (last.get(chain) !== head) moved.push(chain);
        last.set(chain, head);
      } catch (error) {
        deps.log.debug({ err: error, chain }, 'confirmation: head unavailable');
      }
    }),
  );
  return moved;
}
