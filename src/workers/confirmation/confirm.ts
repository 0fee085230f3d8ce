// The confirmation worker: every CONFIRMATION_POLL_SECONDS it asks the chain about broadcast attempts and moves
// their intents to pending_confirmation, settled, failed or manual_review.
// Each poll takes a bounded batch, least recently checked first, so a backlog that stays open (manual review) cannot
// starve newer payments. Each check locks the intent, then the attempt (the order every writer uses), skipping either
// when another transaction holds it: several worker processes never handle the same attempt at once, and a poll
// never waits on, or deadlocks with, an execution run or an operator.
import type { Logger } from 'pino';
import type { ChainAdapter, ChainAdapters, SignedTransfer } from '../../chains/port.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import {
  claimAttemptsToCheck,
  findAttemptForUpdate,
  markConfirmed,
  markFailed,
  markIncluded,
  signedOf,
} from '../../db/queries/attempts.js';
import { changeStatus, findIntent } from '../../db/queries/intents.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { emitPaymentEvent, failOnChain, settleIntent } from '../outcomes.js';
import { decideConfirmation } from './decide.js';

export interface ConfirmationDeps {
  pool: Pool;
  clock: Clock;
  adapters: ChainAdapters;
  config: Pick<Config, 'stuckAfterSeconds'>;
  log: Logger;
}

/** Attempts looked at per poll; the rest wait for the next one. */
export const CONFIRMATION_BATCH = 200;
/** Intent statuses whose broadcast attempt the worker watches (manual review included: the chain may still decide). */
const WATCHED: readonly PaymentStatus[] = ['broadcasted', 'pending_confirmation', 'manual_review'];
const PARALLEL_CHECKS = 8;

export interface ConfirmationSummary {
  checked: number;
  settled: number;
  failed: number;
  manualReview: number;
}

export async function confirmOnce(deps: ConfirmationDeps): Promise<ConfirmationSummary> {
  const claimed = await claimAttemptsToCheck(deps.pool, WATCHED, CONFIRMATION_BATCH, deps.clock.now());
  const summary: ConfirmationSummary = { checked: 0, settled: 0, failed: 0, manualReview: 0 };
  const queue = [...claimed];
  const workers = Array.from({ length: Math.min(PARALLEL_CHECKS, queue.length) }, async () => {
    for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
      const { id, payment_intent_id: intentId } = next;
      try {
        const outcome = await checkAttempt(deps, intentId, id);
        if (outcome === null) continue;
        summary.checked++;
        if (outcome === 'settle') summary.settled++;
        if (outcome === 'fail') summary.failed++;
        if (outcome === 'manual_review') summary.manualReview++;
      } catch (error) {
        deps.log.error({ err: error, attempt_id: id }, 'confirmation: check failed; will retry next poll');
      }
    }
  });
  await Promise.all(workers);
  return summary;
}

/** A 'replaced' attempt of the same intent that the chain reports final (or still pending), if any. */
async function landedSibling(tx: Queryable, adapter: ChainAdapter, intentId: string, attemptId: string) {
  const { rows } = await tx.query<{ id: string; tx_id: string; signed_tx: string; chain_meta: SignedTransfer['meta'] }>(
    "SELECT id, tx_id, signed_tx, chain_meta FROM payment_attempts WHERE payment_intent_id = $1 AND id <> $2 AND status = 'replaced'",
    [intentId, attemptId],
  );
  for (const row of rows) {
    const status = await adapter.getStatus(signedOf(row));
    if (status.state === 'final') return { id: row.id, tx_id: row.tx_id, feeNative: status.feeNative };
    if (status.state === 'included' || status.state === 'pending') return 'pending' as const;
  }
  return null;
}

/** Locks the intent unless another transaction holds it. */
async function lockIntentIfFree(tx: Queryable, intentId: string): Promise<boolean> {
  const { rowCount } = await tx.query('SELECT 1 FROM payment_intents WHERE id = $1 FOR UPDATE SKIP LOCKED', [intentId]);
  return rowCount === 1;
}

async function checkAttempt(deps: ConfirmationDeps, intentId: string, attemptId: string) {
  return withTransaction(deps.pool, async (tx) => {
    if (!(await lockIntentIfFree(tx, intentId))) return null; // another worker or an operator has it
    const intent = await findIntent(tx, intentId);
    if (!intent || !WATCHED.includes(intent.status)) return null; // it moved on
    const attempt = await findAttemptForUpdate(tx, attemptId, true);
    if (!attempt || attempt.status !== 'broadcasted' || attempt.payment_intent_id !== intent.id) return null;
    const adapter = deps.adapters[attempt.chain];
    const signed = signedOf(attempt);
    const chainStatus = await adapter.getStatus(signed);
    const now = deps.clock.now();
    const action = decideConfirmation({
      chain: attempt.chain,
      intentStatus: intent.status,
      chainStatus,
      broadcastAt: attempt.broadcast_at ?? attempt.created_at,
      now,
      stuckAfterSeconds: deps.config.stuckAfterSeconds,
    });
    const log = deps.log.child({ payment_intent_id: intent.id, attempt_id: attempt.id, tx_id: attempt.tx_id });
    switch (action.kind) {
      case 'settle':
        await markConfirmed(tx, attempt.id, action.feeNative, now);
        await settleIntent(tx, intent, attempt, action.feeNative, now);
        log.info('confirmation: settled');
        break;
      case 'fail': {
        // A fee-bumped replacement shares its nonce with the attempt it replaced: if this one failed because the
        // other landed, the payment happened through the other.
        const sibling = await landedSibling(tx, adapter, intent.id, attempt.id);
        if (sibling === 'pending') break;
        if (sibling) {
          await markFailed(tx, attempt.id, action.reason, `superseded by ${sibling.tx_id}`, action.feeNative, 'replaced');
          await markConfirmed(tx, sibling.id, sibling.feeNative, now);
          await settleIntent(tx, intent, sibling, sibling.feeNative, now);
          log.info({ settled_by: sibling.tx_id }, 'confirmation: settled by the replaced transaction');
          return 'settle' as const;
        }
        await failOnChain(tx, intent, attempt.id, action, now);
        log.warn({ reason: action.reason }, 'confirmation: failed');
        break;
      }
      case 'pending_confirmation':
        await markIncluded(tx, attempt.id, now);
        intent.status = await changeStatus(tx, intent, 'pending_confirmation', now);
        break;
      case 'manual_review':
        intent.status = await changeStatus(tx, intent, 'manual_review', now, 'stuck');
        await emitPaymentEvent(tx, intent, 'payment.manual_review', now, {
          tx_id: attempt.tx_id,
          stuck_since: (attempt.broadcast_at ?? attempt.created_at).toISOString(),
        });
        log.warn('confirmation: stuck, moved to manual review');
        break;
      case 'resend':
        // The node forgot or never got the bytes; sending them again is harmless and may unstick it.
        await adapter.broadcast(signed).catch((error: unknown) => log.warn({ err: error }, 'confirmation: re-send failed'));
        break;
      case 'wait':
        if (chainStatus.state === 'included') await markIncluded(tx, attempt.id, now);
        break;
    }
    return action.kind;
  });
}
