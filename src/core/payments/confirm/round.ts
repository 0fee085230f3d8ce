// Confirmation: a round looks at every broadcast attempt the worker watches, a page at a time. It asks each chain about
// a page in as few calls as the node allows (chain-calls.ts), decides without a lock which verdicts change something,
// and writes those in batches (verdicts.ts): pending_confirmation, settled, failed or manual_review. The chain is never
// asked under a lock. Locks are taken intent first, then attempt (the order every writer uses), and skipped when
// another transaction holds either: a round never waits on, or deadlocks with, an execution run or an operator.
import { adapterOf } from '../../../chains/port.js';
import { CONFIRMATION_PAGE_ATTEMPTS, CONFIRMATION_WRITE_BATCH_MAX, CONFIRMATION_WRITE_LANES } from '../../../bounds.js';
import { withSessionLockIfFree } from '../../../db/pool.js';
import { listOpenAttempts, type OpenAttempt } from '../../../db/queries/attempts.js';
import { signedOf, type Chain } from '../../../domain/chain.js';
import { WATCHED } from '../../../domain/confirmation.js';
import type { Metrics } from '../../../metrics/registry.js';
import type { LifecycleDeps } from '../../context.js';
import { askAboutAttempts, askAboutSiblings } from './chain-calls.js';
import { applyVerdicts, decide, type Applied, type Verdict } from './verdicts.js';
import { paymentSpans, type PaymentSpans } from '../payment-traces.js';
import { tracer, type Span } from '../../../tracing/tracer.js';

export type ConfirmationDeps = Pick<LifecycleDeps, 'pool' | 'clock' | 'adapters' | 'log' | 'boss'> & {
  config: Pick<LifecycleDeps['config'], 'stuckAfterSeconds' | 'chains'>;
  /** Settlement timings are observed here, once the settlement has committed. */
  metrics?: Pick<Metrics, 'creationToSettlement' | 'finalityToSettlement'>;
};

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

/** One round over every open attempt. Returns what it did; a chain that cannot be asked is logged and skipped. */
export async function confirmRound(deps: ConfirmationDeps): Promise<ConfirmationSummary> {
  const summary: ConfirmationSummary = { checked: 0, settled: 0, failed: 0, manualReview: 0, seen: 0 };
  const ran = await withSessionLockIfFree(deps.pool, ROUND_LOCK, async () => {
    for (let afterId = ''; ; ) {
      const page = await listOpenAttempts(deps.pool, WATCHED, afterId, CONFIRMATION_PAGE_ATTEMPTS);
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

/** A page of a round is a trace of its own, linked to the traces of the payments it writes a verdict for. */
async function confirmPage(deps: ConfirmationDeps, page: readonly OpenAttempt[], summary: ConfirmationSummary): Promise<void> {
  await tracer().inSpan('confirmation round', { parent: null, attributes: { 'attempts.seen': page.length } }, (round) => confirmPageIn(deps, page, summary, round));
}

async function confirmPageIn(deps: ConfirmationDeps, page: readonly OpenAttempt[], summary: ConfirmationSummary, round: Span): Promise<void> {
  // 1. Ask the chains; decide once without a lock, so that only an attempt whose verdict changes something is locked.
  const now = deps.clock.now();
  const acting = (await askAboutAttempts(deps, page)).filter(({ attempt, verdict }) => {
    const action = decide(deps, attempt.intent_status, attempt, verdict, now);
    return action.kind !== 'wait' || (verdict.kind === 'included' && attempt.included_at === null);
  });
  const cannotLand = acting.filter((item) => item.verdict.kind === 'cannot_land');
  const siblings = await askAboutSiblings(deps, cannotLand.map((item) => item.attempt));
  const pending: Verdict[] = [];
  for (const item of acting) {
    const k = cannotLand.indexOf(item);
    const sibling = k === -1 ? { ok: true as const, value: null } : siblings[k]!;
    if (sibling.ok) pending.push({ ...item, sibling: sibling.value });
    else deps.log.error({ err: sibling.error, attempt_id: item.attempt.id }, 'confirmation: check failed; will retry next round');
  }
  const spans = await paymentSpans(deps.pool, round, 'payment.confirm', pending.map((v) => v.attempt.payment_intent_id));
  try {
    await writeVerdicts(deps, pending, summary, spans);
  } finally {
    spans.end();
  }
}

/** Writes the verdicts in batches, CONFIRMATION_WRITE_LANES at once; a second attempt of one payment waits for a later batch. */
async function writeVerdicts(deps: ConfirmationDeps, verdicts: Verdict[], summary: ConfirmationSummary, spans: PaymentSpans): Promise<void> {
  let pending = verdicts;
  while (pending.length > 0) {
    const later: Verdict[] = [];
    const batches = Array.from({ length: Math.ceil(pending.length / CONFIRMATION_WRITE_BATCH_MAX) }, (_, i) =>
      pending.slice(i * CONFIRMATION_WRITE_BATCH_MAX, (i + 1) * CONFIRMATION_WRITE_BATCH_MAX),
    );
    await drainWith(CONFIRMATION_WRITE_LANES, batches, async (batch) => {
      const applied = await applyVerdicts(deps, batch);
      let settled = 0;
      for (const [k, outcome] of applied.entries()) {
        const { attempt } = batch[k]!;
        if (!outcome.ok) {
          deps.log.error({ err: outcome.error, attempt_id: attempt.id }, 'confirmation: check failed; will retry next round');
          spans.fail(attempt.payment_intent_id, outcome.error);
        } else if (outcome.value.action === 'later') later.push(batch[k]!);
        else {
          spans.set(attempt.payment_intent_id, {
            'confirmation.action': outcome.value.action ?? 'none',
            'attempt.id': attempt.id,
            'stableroute.chain': attempt.chain,
            'failure.reason': outcome.value.reason,
          });
          settled += outcome.value.action === 'settle' ? 1 : 0;
          await afterCommit(deps, attempt, outcome.value, summary);
        }
      }
      if (settled > 0) deps.log.info({ settled }, 'confirmation: settled');
    });
    pending = later;
  }
}

const LOGGED = new Set<Applied['action']>(['fail', 'retry_alone', 'cancelled', 'manual_review', 'resend']);

/** What a committed verdict leaves to do: count it, time a settlement, log, and re-send bytes the node forgot. */
async function afterCommit(deps: ConfirmationDeps, attempt: OpenAttempt, applied: Applied, summary: ConfirmationSummary): Promise<void> {
  const { action } = applied;
  if (action === null || action === 'later') return;
  summary.checked++;
  if (action === 'settle') summary.settled++;
  if (action === 'fail' || action === 'cancelled') summary.failed++;
  if (action === 'manual_review') summary.manualReview++;
  if (applied.settlement) observeSettlement(deps, attempt.chain, applied.settlement);
  // Only what is logged gets a child logger: pino serialises its bindings on creation, and a plain settlement logs nothing.
  if (!applied.settledBy && !LOGGED.has(action)) return;
  const log = deps.log.child({ payment_intent_id: attempt.payment_intent_id, attempt_id: attempt.id, tx_id: attempt.tx_id });
  if (applied.settledBy) log.info({ settled_by: applied.settledBy }, 'confirmation: settled by the replaced transaction');
  if (action === 'fail') log.warn({ reason: applied.reason }, 'confirmation: failed');
  if (action === 'retry_alone') log.warn({ reason: applied.reason }, 'confirmation: its on-chain batch cannot land; retried alone');
  if (action === 'cancelled') log.warn('confirmation: the cancel on chain is final; failed, funds released');
  if (action === 'manual_review') log.warn('confirmation: stuck, moved to manual review');
  if (action === 'resend') {
    // The node forgot or never got the bytes; sending them again, after the commit, is harmless and may unstick it.
    await adapterOf(deps.adapters, attempt.chain).broadcast(signedOf(attempt)).catch((error: unknown) => log.warn({ err: error }, 'confirmation: re-send failed'));
  }
}

/** Runs `fn` over `items` (taken from the front as they go), `n` at a time. */
async function drainWith<T>(n: number, items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      for (let next = items.shift(); next !== undefined; next = items.shift()) await fn(next);
    }),
  );
}

function observeSettlement(deps: ConfirmationDeps, chain: Chain, s: { createdAt: Date; at: Date; finalAt: Date | undefined }): void {
  const seconds = (from: Date) => Math.max(0, (s.at.getTime() - from.getTime()) / 1000);
  deps.metrics?.creationToSettlement.observe({ chain }, seconds(s.createdAt));
  if (s.finalAt) deps.metrics?.finalityToSettlement.observe({ chain }, seconds(s.finalAt));
}
