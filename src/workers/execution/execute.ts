// The execution worker: sign once, persist before sending, send, record. After a crash or a retry it re-sends the
// persisted bytes; it signs anew only when the chain proves the old transaction can never land.
import type { Logger } from 'pino';
import type PgBoss from 'pg-boss';
import { ChainError, type ChainAdapters, type SignedTransfer, type TxStatus } from '../../chains/port.js';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { liveAttempt, markBroadcasted, markFailed, signedOf, type AttemptRow } from '../../db/queries/attempts.js';
import { recordSignRefusal } from '../../db/queries/sign-refusals.js';
import { changeStatus, countTransitions, findIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import { EXECUTION_MAX_ATTEMPTS, enqueueExecution, setAside, type ExecutionJob } from '../../jobs/queue.js';
import { movements } from '../../ledger/movements.js';
import { post } from '../../ledger/store.js';
import { emitPaymentEvent, failIntent, failOnChain, hasDebit, persistSignedAttempt } from '../outcomes.js';

export interface ExecutionDeps {
  pool: Pool;
  boss: PgBoss;
  clock: Clock;
  adapters: ChainAdapters;
  config: Pick<Config, 'executionRetryDelaySeconds'>;
  log: Logger;
}

type Claim =
  | { kind: 'done'; why: string }
  | {
      kind: 'send';
      intent: PaymentIntentRow;
      attempt: Pick<AttemptRow, 'id' | 'tx_id' | 'signed_tx' | 'chain_meta'>;
      /** The bytes were sent before with an unknown outcome: a refusal now does not prove they cannot land. */
      resend: boolean;
    }
  | { kind: 'unsigned'; error: ChainError }; // the chain refused to even build the transfer

const LANDED: TxStatus['state'][] = ['pending', 'included', 'final'];
const CANNOT_LAND: TxStatus['state'][] = ['expired', 'failed'];

/** Runs one execution job to completion. Business failures are handled here; only bugs and outages throw. */
export async function executePayment(deps: ExecutionDeps, job: ExecutionJob): Promise<void> {
  const log = deps.log.child({ payment_intent_id: job.payment_intent_id, attempt: job.attempt });
  const claim = await withTransaction(deps.pool, (tx) => claimAndSign(deps, tx, job));
  if (claim.kind === 'done') {
    log.debug({ why: claim.why }, 'execution: nothing to do');
    return;
  }
  if (claim.kind === 'unsigned') {
    await withTransaction(deps.pool, (tx) => recordOutcome(deps, tx, job, null, claim.error));
    log.warn({ reason: claim.error.reason, err: claim.error.shortMessage }, 'execution: could not sign');
    return;
  }
  const adapter = deps.adapters[claim.intent.selected_chain];
  let error: ChainError | null = null;
  try {
    await adapter.broadcast(signedOf(claim.attempt));
  } catch (caught) {
    error =
      caught instanceof ChainError
        ? caught
        : new ChainError('rpc_error', 'unknown', 'broadcast failed unexpectedly', { cause: caught, details: String(caught) });
  }
  // A node refusing bytes it may already have passed on (or that other nodes hold) proves nothing: only the chain's
  // own answer to getStatus, on the next run, may end that attempt.
  if (error && claim.resend && error.outcome === 'rejected') {
    error = new ChainError(error.reason, 'unknown', error.shortMessage, { cause: error, details: error.details });
  }
  await withTransaction(deps.pool, (tx) => recordOutcome(deps, tx, job, claim.attempt.id, error));
  if (error) log.warn({ reason: error.reason, outcome: error.outcome, err: error.shortMessage }, 'execution: broadcast failed');
  else log.info({ tx_id: claim.attempt.tx_id }, 'execution: broadcasted');
}

async function claimAndSign(deps: ExecutionDeps, tx: Queryable, job: ExecutionJob): Promise<Claim> {
  const now = deps.clock.now();
  const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
  if (!intent) return { kind: 'done', why: 'unknown intent' };
  // The attempt number comes from the intent's history, not from the job: a job whose run crashed after its outcome
  // committed is re-run by pg-boss while the next attempt's job already waits. That stale run must do nothing.
  const attempt = 1 + (await countTransitions(tx, intent.id, 'retrying'));
  if (job.attempt !== attempt) return { kind: 'done', why: `job of attempt ${job.attempt}; the intent is at attempt ${attempt}` };
  // Spec: proceed only while the intent still waits for execution (or is being retried, or a crashed run left it).
  if (intent.status === 'route_selected' || intent.status === 'retrying') {
    intent.status = await changeStatus(tx, intent, 'broadcasting', now);
    await emitPaymentEvent(tx, intent, 'payment.broadcasting', now);
  } else if (intent.status !== 'broadcasting') {
    return { kind: 'done', why: `intent is ${intent.status}` };
  }
  const adapter = deps.adapters[intent.selected_chain];

  const live = await liveAttempt(tx, intent.id, { forUpdate: true });
  if (live?.status === 'broadcasted') {
    intent.status = await changeStatus(tx, intent, 'broadcasted', now);
    await emitPaymentEvent(tx, intent, 'payment.broadcasted', now, { tx_id: live.tx_id });
    return { kind: 'done', why: 'already broadcast' };
  }
  if (live) {
    // A transaction signed by an earlier run whose send had an unknown outcome (timeout, crash). Ask the chain.
    const status = await adapter.getStatus(signedOf(live));
    if (LANDED.includes(status.state)) {
      await markBroadcasted(tx, live.id, now);
      intent.status = await changeStatus(tx, intent, 'broadcasted', now);
      await emitPaymentEvent(tx, intent, 'payment.broadcasted', now, { tx_id: live.tx_id });
      return { kind: 'done', why: 'earlier send had landed' };
    }
    if (!CANNOT_LAND.includes(status.state)) return { kind: 'send', intent, attempt: live, resend: true }; // same bytes
    if (status.state === 'failed') {
      // Mined and failed (reverted): the fee is spent and the nonce used. As when the confirmation worker finds it
      // (decision 28): the intent fails and the funds return; the merchant decides on a new payment.
      await failOnChain(tx, intent, live.id, { ...status, detail: status.details ?? status.reason }, now);
      return { kind: 'done', why: `the transfer failed on chain: ${status.reason}` };
    }
    await markFailed(tx, live.id, live.failure_reason ?? 'dropped', 'superseded: the chain reports it can no longer land');
  }

  const request = { paymentIntentId: intent.id, to: intent.destination_address, amountMicros: intent.amount_micros };
  let signed: SignedTransfer;
  // A refused signature must leave nothing behind (no nonce taken): the adapter's writes sit behind a savepoint.
  await tx.query('SAVEPOINT sign_transfer');
  try {
    // After a rejection the old nonce is still free: re-sign on it (higher fee) so no later transfer waits behind a
    // gap. After a nonce conflict the nonce is someone else's, so a fresh one is allocated.
    const previous = await lastFailedAttempt(tx, intent.id);
    signed =
      previous && adapter.replaceWithHigherFee && previous.chain_meta.nonce != null && previous.failure_reason !== 'nonce_conflict'
        ? await adapter.replaceWithHigherFee(tx, request, signedOf(previous))
        : await adapter.signTransfer(tx, request);
  } catch (error) {
    if (!(error instanceof ChainError)) throw error;
    await tx.query('ROLLBACK TO SAVEPOINT sign_transfer');
    return { kind: 'unsigned', error };
  }
  await tx.query('RELEASE SAVEPOINT sign_transfer');
  const attemptId = await persistSignedAttempt(tx, adapter, intent, signed, now);
  // One debit per intent, at its first signed transfer; later attempts move the same funds.
  if (!(await hasDebit(tx, intent.id))) await post(tx, movements.debit(intent.selected_chain, intent.amount_micros), { paymentIntentId: intent.id, at: now });
  return {
    kind: 'send',
    intent,
    attempt: { id: attemptId, tx_id: signed.txId, signed_tx: signed.rawTx, chain_meta: signed.meta },
    resend: false,
  };
}

async function lastFailedAttempt(tx: Queryable, intentId: string) {
  const { rows } = await tx.query<Pick<AttemptRow, 'tx_id' | 'signed_tx' | 'chain_meta' | 'failure_reason'>>(
    `SELECT tx_id, signed_tx, chain_meta, failure_reason FROM payment_attempts
      WHERE payment_intent_id = $1 AND status = 'failed' ORDER BY created_at DESC, id DESC LIMIT 1`,
    [intentId],
  );
  return rows[0] ?? null;
}

async function recordOutcome(
  deps: ExecutionDeps,
  tx: Queryable,
  job: ExecutionJob,
  attemptId: string | null,
  error: ChainError | null,
): Promise<void> {
  const now = deps.clock.now();
  const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
  if (!intent || intent.status !== 'broadcasting') return; // someone else moved it on; nothing of ours to record
  if (attemptId && (await liveAttempt(tx, intent.id))?.id !== attemptId) return; // an overlapping run took over
  if (!error && attemptId) {
    await markBroadcasted(tx, attemptId, now);
    intent.status = await changeStatus(tx, intent, 'broadcasted', now);
    const attempt = await liveAttempt(tx, intent.id);
    await emitPaymentEvent(tx, intent, 'payment.broadcasted', now, { tx_id: attempt?.tx_id ?? '' });
    return;
  }
  // A rejection means these bytes can never land: the attempt is over. An unknown outcome keeps the attempt live so
  // the next run asks the chain and re-sends the same bytes.
  if (!error) return;
  if (!attemptId) {
    const detail = error.details ?? error.shortMessage;
    await recordSignRefusal(tx, { paymentIntentId: intent.id, chain: intent.selected_chain, reason: error.reason, detail, at: now });
  } else if (error.outcome === 'rejected') await markFailed(tx, attemptId, error.reason, error.details ?? error.shortMessage);
  else {
    await tx.query('UPDATE payment_attempts SET failure_reason = $2, failure_detail = $3 WHERE id = $1', [attemptId, error.reason, error.shortMessage]);
  }

  if (job.attempt < EXECUTION_MAX_ATTEMPTS) {
    intent.status = await changeStatus(tx, intent, 'retrying', now, error.reason);
    const delaySeconds = deps.config.executionRetryDelaySeconds * 2 ** (job.attempt - 1);
    await enqueueExecution(deps.boss, tx, { payment_intent_id: intent.id, attempt: job.attempt + 1 }, delaySeconds);
    return;
  }
  if (error.outcome === 'unknown' && attemptId) {
    // Out of attempts, but the last bytes may still be on their way: never release funds that might be paid out.
    // The confirmation worker watches the attempt, re-sends it, and escalates to manual review when stuck.
    await markBroadcasted(tx, attemptId, now);
    intent.status = await changeStatus(tx, intent, 'broadcasted', now, error.reason);
    const attempt = await liveAttempt(tx, intent.id);
    await emitPaymentEvent(tx, intent, 'payment.broadcasted', now, { tx_id: attempt?.tx_id ?? '' });
    return;
  }
  await failIntent(tx, intent, error.reason, now);
  await setAside(deps.boss, tx, { ...job, reason: error.reason });
}
