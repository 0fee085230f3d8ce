// Execution of a payment intent: sign once, persist before sending, send, record. After a crash or a retry it re-sends
// the persisted bytes; it signs anew only when the chain proves the old transaction can never land.
//
// Each run is load -> ask the chain -> lock, re-check, decide, persist. The chain is never asked while a row lock is
// held (a slow node would hold up every other writer of the payment); the transaction that persists re-checks what
// the run decided from, and when another run or an operator changed it in between, the run starts over.
import { ChainError, type PreparedTransfer } from '../../chains/port.js';
import { withTransaction, type Queryable } from '../../db/pool.js';
import { markBroadcasted, markFailed, signedOf, type AttemptRow } from '../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { releaseLease, renewLease } from '../../db/queries/leases.js';
import { hasReachedChain, transferVerdict } from '../../domain/transfer-verdict.js';
import { newId } from '../../ids.js';
import type { ExecutionJob } from '../../jobs/queue.js';
import { claim, type Done, type Run } from './claim.js';
import { CHANGED, MAX_ROUNDS, type LifecycleDeps } from './deps.js';
import { recordFinalOutcome } from './record.js';
import { moveAndTell } from './events.js';
import { failOnChain } from './outcomes.js';
import { lockLive } from './live.js';
import { signerOf } from './sign-batch.js';
import { transferRequestOf } from './sign.js';

export type ExecutionDeps = LifecycleDeps;

type Sendable = Pick<AttemptRow, 'id' | 'tx_id' | 'signed_tx' | 'chain_meta'>;


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
 * holds the payment's execution lease from its claim to its end (decision 57): a second run of the same attempt stops
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
  const claimed = await claim(deps, run);
  if ('kind' in claimed) return claimed;
  const { intent, live } = claimed;
  const adapter = deps.adapters[intent.selected_chain];
  if (live) {
    // Ask the chain, outside any lock; a node that cannot be asked fails the run (the job is retried).
    const verdict = transferVerdict(await adapter.getStatus(signedOf(live)), { chain: intent.selected_chain });
    if (hasReachedChain(verdict)) return withLiveAttempt(deps, run, intent.id, live.id, (tx, locked) => markSent(deps, tx, locked, live));
    if (verdict.kind === 'unknown') return { kind: 'send', intent, attempt: live, resend: true }; // the same bytes
    // Its nonce used at final depth by another transaction (nothing of ours mined, nothing spent): it can never land,
    // as after an expiry, and a new transfer is signed on a fresh nonce (decision 35).
    const nonceTaken = verdict.reason === 'nonce_conflict';
    if (verdict.onChain && !nonceTaken) {
      // Mined and failed (reverted): the fee is spent and the nonce used. As when the confirmation worker finds it
      // (decision 61): the intent fails and the funds return; the merchant decides on a new payment.
      return withLiveAttempt(deps, run, intent.id, live.id, async (tx, locked): Promise<Step> => {
        await failOnChain(tx, locked, live.id, verdict, deps.clock.now());
        return { kind: 'done', why: `the transfer failed on chain: ${verdict.reason}` };
      });
    }
    // It is over, whether or not a successor can be signed now.
    const reason = nonceTaken ? 'nonce_conflict' : (live.failure_reason ?? 'dropped');
    const superseded = await withLiveAttempt(deps, run, intent.id, live.id, async (tx) => {
      await markFailed(tx, live.id, reason, 'superseded: the chain reports it can no longer land');
      return true;
    });
    if (superseded === CHANGED) return CHANGED;
  }

  // After a refusal the nonce allocation hands this intent its own refused nonce back while no other transfer took it,
  // so no later transfer waits behind a gap; after a nonce conflict it is someone else's, and a fresh one is taken.
  let prepared: PreparedTransfer;
  try {
    prepared = await adapter.prepareTransfer(transferRequestOf(intent));
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

