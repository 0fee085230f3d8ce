// Execution of a payment intent: sign once, persist before sending, send, record. After a crash or a retry it re-sends
// the persisted bytes; it signs anew only when the chain proves the old transaction can never land.
//
// Each run is load -> ask the chain -> lock, re-check, decide, persist. The chain is never asked while a row lock is
// held (a slow node would hold up every other writer of the payment); the transaction that persists re-checks what
// the run decided from, and when another run or an operator changed it in between, the run starts over.
import { ChainError, type PreparedTransfer } from '../../chains/port.js';
import { withTransaction, type Queryable } from '../../db/pool.js';
import {
  leaseAndLiveAttempt,
  liveAndLastFailed,
  markBroadcasted,
  markFailed,
  recordSendError,
  signedOf,
  type AttemptRow,
} from '../../db/queries/attempts.js';
import { changeStatus, executionFacts, findIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import { grantLease, lockLease, releaseLease, renewLease } from '../../db/queries/leases.js';
import { recordSignRefusal } from '../../db/queries/sign-refusals.js';
import { hasReachedChain, transferVerdict } from '../../domain/transfer-verdict.js';
import { newId } from '../../ids.js';
import { EXECUTION_MAX_ATTEMPTS, enqueueExecution, setAside, type ExecutionJob } from '../../jobs/queue.js';
import { CHANGED, MAX_ROUNDS, type LifecycleDeps } from './deps.js';
import { moveAndTell } from './events.js';
import { failIntent, failOnChain } from './outcomes.js';
import { lockLive } from './live.js';
import { signerOf } from './sign-batch.js';
import { transferRequestOf } from './sign.js';

export type ExecutionDeps = LifecycleDeps;

type Sendable = Pick<AttemptRow, 'id' | 'tx_id' | 'signed_tx' | 'chain_meta'>;

type Done = { kind: 'done'; why: string };

type Step =
  | Done
  | {
      kind: 'send';
      intent: PaymentIntentRow;
      attempt: Sendable;
      /** The bytes were sent before with an unknown outcome: a refusal now does not prove they cannot land. */
      resend: boolean;
    }
  | { kind: 'unsigned'; error: ChainError } // the chain refused to even build the transfer
  | typeof CHANGED;

/** What the claim found, for the steps that follow it outside any lock. */
interface Claimed {
  intent: PaymentIntentRow;
  /** A transfer signed by an earlier run whose send had an unknown outcome (timeout, crash). */
  live: AttemptRow | null;
  /** The intent's last refused transfer: its nonce is re-signed with a higher fee. */
  previous: AttemptRow | null;
}

/** One run of an execution: the job, and the id under which it holds the payment's execution lease. */
interface Run {
  job: ExecutionJob;
  runId: string;
  /** The run's last transaction gave its lease back with its outcome: nothing left to release. */
  released?: boolean;
}

export interface ExecuteOptions {
  /** The lease owner this run is: a sweeper that took over an expired lease passes the owner it took it for. */
  runId?: string;
}

/**
 * Renews the run's lease every third of its length until stopped, so a live run never loses it to the sweeper. A
 * renewal that fails (the database is away) is only logged: the lease then runs out and, if this run is alive, its
 * next locked step finds it was taken over and stops there.
 */
function startHeartbeat(deps: ExecutionDeps, run: Run): () => void {
  const seconds = deps.config.executionLeaseSeconds;
  const timer = setInterval(() => {
    renewLease(deps.pool, run.job.payment_intent_id, run.runId, seconds).catch((error: unknown) =>
      deps.log.warn({ err: error, payment_intent_id: run.job.payment_intent_id }, 'execution lease renewal failed'),
    );
  }, (seconds * 1000) / 3);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Runs one execution job to completion. Business failures are handled here; only bugs and outages throw. The run
 * holds the payment's execution lease from its claim to its end (decision 99): a second run of the same attempt stops
 * at its claim while the lease is alive, and every write of this run checks, under the intent's lock, that the lease
 * is still its own.
 */
export async function executePayment(deps: ExecutionDeps, job: ExecutionJob, options: ExecuteOptions = {}): Promise<void> {
  const run: Run = { job, runId: options.runId ?? newId('run') };
  const stopHeartbeat = startHeartbeat(deps, run);
  try {
    await execute(deps, run);
  } finally {
    stopHeartbeat();
    if (!run.released) {
      await releaseLease(deps.pool, job.payment_intent_id, run.runId).catch((error: unknown) =>
        deps.log.warn({ err: error, payment_intent_id: job.payment_intent_id }, 'execution lease release failed; it runs out instead'),
      );
    }
  }
}

async function execute(deps: ExecutionDeps, run: Run): Promise<void> {
  const { job } = run;
  const log = deps.log.child({ payment_intent_id: job.payment_intent_id, attempt: job.attempt });
  let step: Step = CHANGED;
  for (let round = 1; step === CHANGED; round++) {
    if (round > MAX_ROUNDS) throw new Error(`payment ${job.payment_intent_id} kept changing while it was being executed`);
    step = await nextStep(deps, run);
  }
  if (step.kind === 'done') {
    log.debug({ why: step.why }, 'execution: nothing to do');
    return;
  }
  if (step.kind === 'unsigned') {
    await recordFinalOutcome(deps, run, null, step.error);
    log.warn({ reason: step.error.reason, err: step.error.shortMessage }, 'execution: could not sign');
    return;
  }
  const adapter = deps.adapters[step.intent.selected_chain];
  let error: ChainError | null = null;
  try {
    await adapter.broadcast(signedOf(step.attempt));
  } catch (caught) {
    error =
      caught instanceof ChainError
        ? caught
        : new ChainError('rpc_error', 'unknown', 'broadcast failed unexpectedly', { cause: caught, details: String(caught) });
  }
  // A node refusing bytes it may already have passed on (or that other nodes hold) proves nothing: only the chain's
  // own answer to getStatus, on the next run, may end that attempt.
  if (error && step.resend && error.outcome === 'rejected') {
    error = new ChainError(error.reason, 'unknown', error.shortMessage, { cause: error, details: error.details });
  }
  const attemptId = step.attempt.id;
  await recordFinalOutcome(deps, run, attemptId, error);
  if (error) log.warn({ reason: error.reason, outcome: error.outcome, err: error.shortMessage }, 'execution: broadcast failed');
  else log.info({ tx_id: step.attempt.tx_id }, 'execution: broadcasted');
}

/** One round: claim, ask the chain about a transfer an earlier run left, then sign or settle on what it said. */
async function nextStep(deps: ExecutionDeps, run: Run): Promise<Step> {
  const claim = await withTransaction(deps.pool, (tx) => claimIntent(deps, tx, run));
  if ('kind' in claim) return claim;
  const { intent, live } = claim;
  const adapter = deps.adapters[intent.selected_chain];
  let previous = claim.previous;
  if (live) {
    // Ask the chain, outside any lock; a node that cannot be asked fails the run (the job is retried).
    const verdict = transferVerdict(await adapter.getStatus(signedOf(live)), { chain: intent.selected_chain });
    if (hasReachedChain(verdict)) return withLiveAttempt(deps, run, intent.id, live.id, (tx, locked) => markSent(deps, tx, locked, live));
    if (verdict.kind === 'unknown') return { kind: 'send', intent, attempt: live, resend: true }; // the same bytes
    if (verdict.onChain) {
      // Mined and failed (reverted): the fee is spent and the nonce used. As when the confirmation worker finds it
      // (decision 28): the intent fails and the funds return; the merchant decides on a new payment.
      return withLiveAttempt(deps, run, intent.id, live.id, async (tx, locked): Promise<Step> => {
        await failOnChain(tx, locked, live.id, verdict, deps.clock.now());
        return { kind: 'done', why: `the transfer failed on chain: ${verdict.reason}` };
      });
    }
    // It expired: it is over, whether or not a successor can be signed now; the successor re-signs its nonce.
    const reason = live.failure_reason ?? 'dropped';
    const superseded = await withLiveAttempt(deps, run, intent.id, live.id, async (tx) => {
      await markFailed(tx, live.id, reason, 'superseded: the chain reports it can no longer land');
      return true;
    });
    if (superseded === CHANGED) return CHANGED;
    previous = { ...live, status: 'failed', failure_reason: reason };
  }

  // After a rejection the old nonce is still free: re-sign on it (higher fee) so no later transfer waits behind a gap.
  // After a nonce conflict the nonce is someone else's, so a fresh one is allocated.
  const request = transferRequestOf(intent);
  let prepared: PreparedTransfer;
  try {
    prepared =
      previous && adapter.prepareReplacement && previous.chain_meta.nonce != null && previous.failure_reason !== 'nonce_conflict'
        ? await adapter.prepareReplacement(request, signedOf(previous))
        : await adapter.prepareTransfer(request);
  } catch (error) {
    if (!(error instanceof ChainError)) throw error;
    return { kind: 'unsigned', error };
  }
  // Signed in a batch with the other executions of the chain that reach this point now (sign-batch.ts).
  const signed = await signerOf(deps, intent.selected_chain).submit({ runId: run.runId, intentId: intent.id, prepared });
  if (signed === CHANGED) return CHANGED;
  const { attemptId, signed: transfer } = signed;
  return {
    kind: 'send',
    intent: signed.intent,
    attempt: { id: attemptId, tx_id: transfer.txId, signed_tx: transfer.rawTx, chain_meta: transfer.meta },
    resend: false,
  };
}

/** Takes the intent for this run: route_selected or retrying -> broadcasting, and loads what the next steps need. */
async function claimIntent(deps: ExecutionDeps, tx: Queryable, run: Run): Promise<Claimed | Done> {
  const { job } = run;
  const now = deps.clock.now();
  const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
  if (!intent) return { kind: 'done', why: 'unknown intent' };
  const found = await executionFacts(tx, intent.id);
  // The attempt number comes from the intent's history, not from the job: a job whose run crashed after its outcome
  // committed is re-run by pg-boss while the next attempt's job already waits. That stale run must do nothing.
  const attempt = 1 + found.retries;
  if (job.attempt !== attempt) return { kind: 'done', why: `job of attempt ${job.attempt}; the intent is at attempt ${attempt}` };
  // Spec: proceed only while the intent still waits for execution (or is being retried, or a crashed run left it).
  if (intent.status !== 'route_selected' && intent.status !== 'retrying' && intent.status !== 'broadcasting') {
    return { kind: 'done', why: `intent is ${intent.status}` };
  }
  if (intent.status === 'route_selected' && found.awaitsApproval) {
    // Only an approval queues this payment's job; a stray one must not send it (decision 79).
    return { kind: 'done', why: 'the payment waits for an operator approval' };
  }
  // The lease: only a run of this attempt that is still working ('broadcasting') and alive holds the payment back.
  const lease = await lockLease(tx, intent.id);
  const current = lease !== null && lease.attempt === attempt && intent.status === 'broadcasting';
  if (current && lease.owner !== run.runId && !lease.expired) return { kind: 'done', why: 'another run holds the execution lease' };
  // Taking over an expired lease of this attempt counts the run that died holding it.
  const takeovers = !current ? 0 : lease.owner === run.runId ? lease.takeovers : lease.takeovers + 1;
  await grantLease(tx, { intentId: intent.id, owner: run.runId, attempt, seconds: deps.config.executionLeaseSeconds, takeovers });
  if (intent.status !== 'broadcasting') {
    await moveAndTell(tx, intent, 'broadcasting', 'payment.broadcasting', now);
  }
  const { live, lastFailed } = await liveAndLastFailed(tx, intent.id);
  if (live?.status === 'broadcasted') {
    await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live.tx_id });
    return { kind: 'done', why: 'already broadcast' };
  }
  return { intent, live, previous: lastFailed };
}

/** Runs `act` in a transaction if lockLive finds the payment as this run left it (live.ts); CHANGED otherwise. */
async function withLiveAttempt<T>(
  deps: ExecutionDeps,
  run: Run,
  intentId: string,
  liveId: string | null,
  act: (tx: Queryable, intent: PaymentIntentRow) => Promise<T>,
): Promise<T | typeof CHANGED> {
  return withTransaction(deps.pool, async (tx) => {
    const intent = await lockLive(tx, run.runId, intentId, liveId);
    return intent === CHANGED ? CHANGED : act(tx, intent);
  });
}

/** The chain has the bytes an earlier run sent: the attempt is broadcast. */
async function markSent(deps: ExecutionDeps, tx: Queryable, intent: PaymentIntentRow, live: AttemptRow): Promise<Step> {
  const now = deps.clock.now();
  await markBroadcasted(tx, live.id, now);
  await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live.tx_id });
  return { kind: 'done', why: 'earlier send had landed' };
}

/** The run's outcome, and its lease given back in the same transaction (the run ends with it). */
async function recordFinalOutcome(deps: ExecutionDeps, run: Run, attemptId: string | null, error: ChainError | null): Promise<void> {
  await withTransaction(deps.pool, async (tx) => {
    await recordOutcome(deps, tx, run, attemptId, error);
    await releaseLease(tx, run.job.payment_intent_id, run.runId);
  });
  run.released = true;
}

async function recordOutcome(
  deps: ExecutionDeps,
  tx: Queryable,
  run: Run,
  attemptId: string | null,
  error: ChainError | null,
): Promise<void> {
  const { job } = run;
  const now = deps.clock.now();
  const intent = await findIntent(tx, job.payment_intent_id, { forUpdate: true });
  if (!intent || intent.status !== 'broadcasting') return; // someone else moved it on; nothing of ours to record
  const { holdsLease, live } = await leaseAndLiveAttempt(tx, intent.id, run.runId);
  // Taken over: the new run asks the chain about what we sent (the same bytes) and records it.
  if (!holdsLease) return;
  if (attemptId && live?.id !== attemptId) return; // an overlapping run took over
  if (!error && attemptId) {
    await markBroadcasted(tx, attemptId, now);
    await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live?.tx_id ?? '' });
    return;
  }
  // A rejection means these bytes can never land: the attempt is over. An unknown outcome keeps the attempt live so
  // the next run asks the chain and re-sends the same bytes.
  if (!error) return;
  if (!attemptId) {
    const detail = error.details ?? error.shortMessage;
    await recordSignRefusal(tx, { paymentIntentId: intent.id, chain: intent.selected_chain, reason: error.reason, detail, at: now });
  } else if (error.outcome === 'rejected') await markFailed(tx, attemptId, error.reason, error.details ?? error.shortMessage);
  else await recordSendError(tx, attemptId, error.reason, error.shortMessage);

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
    await moveAndTell(tx, intent, 'broadcasted', 'payment.broadcasted', now, { tx_id: live?.tx_id ?? '' }, error.reason);
    return;
  }
  await failIntent(tx, intent, error.reason, now);
  await setAside(deps.boss, tx, { ...job, reason: error.reason });
}
