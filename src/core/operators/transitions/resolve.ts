// Operator actions on a payment intent in manual_review (Circle/Fireblocks-style resolution of stuck transfers):
//  settled         - an outside check found the transfer final: settle it (with the chain's fee when the chain knows it)
//  failed          - the transfer provably will not land: fail it and release the funds
//  replace         - re-sign the same transaction with a higher fee and the same nonce (Ethereum), watch it again; an
//                    on-chain batch's replacement pays every payment of it, each watched again; every recipient is
//                    screened afresh first, and a hit refuses it unless two operators force it (replacement-screening.ts)
//  retry           - nothing is on chain (an abandoned execution, decision 58): one more execution attempt
//  cancel_on_chain - a transaction on the same nonce that moves nothing (Ethereum), watched by the confirmation worker,
//                    which fails the payment once it is final (decision 63)
// Load, ask the chain (and prepare a replacement or a cancel) without locks, then lock, re-check, decide and persist.
import { RECHECK_ROUNDS_MAX } from '../../../bounds.js';
import { adapterOf, type PreparedTransfer, type SignedTransfer } from '../../../chains/port.js';
import { signedOf } from '../../../domain/chain.js';
import { shareOf } from '../../../domain/fee-share.js';
import { readLiveAttempt, readLiveAttemptsOfTransaction, markBroadcasted, markConfirmed, markFailed, readReplacedAttempts, type AttemptRow } from '../../../db/queries/attempts.js';
import { readIntent, lockIntents } from '../../../db/queries/intents.js';
import { readExecutionFacts } from '../../../db/queries/leases.js';
import { WATCHED } from '../../../domain/confirmation.js';
import { AppError } from '../../../domain/errors.js';
import { refusalOf, type Refusal, type Resolution } from '../../../domain/operator-actions.js';
import { transferVerdict, type TransferVerdict } from '../../../domain/transfer-verdict.js';
import { enqueueExecutions } from '../../../jobs/queue.js';
import type { AppContext, LifecycleDeps } from '../../context.js';
import { CHANGED } from '../../payments/outcomes/changed.js';
import { moveAndTell } from '../../payments/outcomes/events.js';
import { settleIntent } from '../../payments/outcomes/outcomes.js';
import { clearToSign, signAttempts, transferRequestOf } from '../../payments/outcomes/sign-attempts.js';
import type { AuditEntry } from '../audit.js';
import { auditedRound } from './audited-round.js';
import { markOverrideUsed, type ScreeningOverrideRow } from '../../../db/queries/screening-overrides.js';
import type { FourEyesConfig } from './four-eyes.js';
import { clearReplacement } from './replacement-screening.js';
import { failFromManualReview } from './fail-review.js';
import { requestForcedFailure } from './force-fail.js';

export type { Resolution };

export interface ResolutionResult {
  payment_intent_id: string;
  status: string;
  tx_id: string | null;
  /** A forced failure over a transfer that may still land waits for another operator's approval (decision 181). */
  approval?: 'pending';
}

async function ask(deps: LifecycleDeps, attempt: AttemptRow): Promise<TransferVerdict> {
  const status = await adapterOf(deps.adapters, attempt.chain).getStatuses([signedOf(attempt)]).then(([status]) => status!, () => null);
  return transferVerdict(status, { chain: attempt.chain, share: shareOf(attempt) });
}

/** Resolutions whose check covers the transfers a fee bump or a cancel replaced: they share the nonce, and may land. */
const CHECKS_REPLACED: readonly Resolution[] = ['failed', 'cancel_on_chain'];

/** What a resolution needs: the chains and the queue, the screener (a replacement) and who counts as a person (180). */
export type ResolveDeps = LifecycleDeps & Pick<AppContext, 'screener'> & { config: FourEyesConfig };

export async function resolveManualReview(
  deps: ResolveDeps,
  intentId: string,
  resolution: Resolution,
  options: { force?: boolean; audit: AuditEntry },
): Promise<ResolutionResult> {
  for (let round = 1; round <= RECHECK_ROUNDS_MAX; round++) {
    // 1. Load, without locks.
    const seen = await readIntent(deps.pool, intentId);
    if (!seen) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    if (seen.status !== 'manual_review') {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} is ${seen.status}, not manual_review`);
    }
    const seenLive = await readLiveAttempt(deps.pool, seen.id);
    const seenReplaced = CHECKS_REPLACED.includes(resolution) ? (await readReplacedAttempts(deps.pool, [seen.id])).get(seen.id)! : [];
    const adapter = adapterOf(deps.adapters, seen.selected_chain);

    // 2. Ask the chain; decide whether it contradicts the operator; prepare a replacement or a cancel. No lock is held.
    if (resolution === 'retry' && seenLive) {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} has a transfer that may still land; resolve it as settled, failed or replace`);
    }
    if (resolution === 'replace' && !adapter.prepareReplacement) {
      throw new AppError('INVALID_STATE', `${seen.selected_chain} has no fee replacement; resolve as settled or failed`);
    }
    if (resolution === 'cancel_on_chain' && !adapter.prepareCancel) {
      throw new AppError('INVALID_STATE', `${seen.selected_chain} cannot cancel a transfer on chain; resolve as settled or failed`);
    }
    if ((resolution === 'replace' || resolution === 'cancel_on_chain') && !seenLive) {
      throw new AppError('INVALID_STATE', `payment intent ${intentId} has no transfer on chain to ${resolution === 'replace' ? 'replace' : 'cancel'}`);
    }
    // A cancel on chain of an on-chain batch would fail every payment it pays, on one payment's page: not offered.
    if (resolution === 'cancel_on_chain' && seenLive!.tx_payments > 1) {
      throw new AppError(
        'INVALID_STATE',
        `payment intent ${intentId}'s transfer ${seenLive!.tx_id} pays ${seenLive!.tx_payments} payments in one on-chain batch; it cannot be cancelled for one of them: replace it, or resolve it as settled or failed`,
      );
    }
    // A replacement pays what the stuck transaction pays: every payment of an on-chain batch, all still waiting on it.
    const seenMates = resolution === 'replace' ? await readLiveAttemptsOfTransaction(deps.pool, seenLive!.chain, seenLive!.tx_id) : [];
    if (resolution === 'replace' && seenMates.length !== seenLive!.tx_payments) {
      throw new AppError(
        'INVALID_STATE',
        `payment intent ${intentId}'s transfer ${seenLive!.tx_id} pays ${seenLive!.tx_payments} payments and only ${seenMates.length} still wait on it: resolve it as settled or failed`,
      );
    }
    const verdict: TransferVerdict | null = seenLive ? await ask(deps, seenLive) : null;
    const others = await Promise.all(seenReplaced.map((attempt) => ask(deps, attempt)));
    const onNonce = [
      ...(seenLive && verdict ? [{ purpose: seenLive.purpose, verdict }] : []),
      ...seenReplaced.map((attempt, i) => ({ purpose: attempt.purpose, verdict: others[i]! })),
    ];
    const contradiction = refusalOf(resolution, seen.selected_chain, onNonce);
    const refusal = standingRefusal(contradiction, options.force ?? false);
    let prepared: PreparedTransfer | null = null;
    let override: ScreeningOverrideRow | null = null;
    if (!refusal && resolution === 'replace') {
      const paid = await Promise.all(seenMates.map(async (mate) => (await readIntent(deps.pool, mate.payment_intent_id))!));
      override = await clearReplacement(deps, seenLive!, paid, { force: options.force ?? false, audit: options.audit });
      prepared = await adapter.prepareReplacement!(paid.map(transferRequestOf), signedOf(seenLive!));
    }
    if (!refusal && resolution === 'cancel_on_chain') prepared = await adapter.prepareCancel!(signedOf(seenLive!));

    // 3. Lock, re-check, decide, persist.
    // The audit record names every payment the action moves: a batch's replacement moves them all.
    const audit = {
      ...options.audit,
      targets: [...new Set([...options.audit.targets, ...seenMates.map((mate) => mate.payment_intent_id)])],
      ...(override && { details: { ...options.audit.details, screening_override: { id: override.id, requested_by: override.requested_by, screened: override.screened } } }),
    };
    const result = await auditedRound(deps, audit, async (tx): Promise<(ResolutionResult & { send?: SignedTransfer }) | typeof CHANGED> => {
      const now = deps.clock.now();
      const locked = await lockIntents(tx, [intentId, ...seenMates.map((mate) => mate.payment_intent_id)]);
      const intent = locked.get(intentId);
      if (!intent || intent.status !== 'manual_review') return CHANGED;
      const attempt = await readLiveAttempt(tx, intent.id, { forUpdate: true });
      const replaced = CHECKS_REPLACED.includes(resolution) ? (await readReplacedAttempts(tx, [intent.id])).get(intent.id)! : [];
      if ((attempt?.id ?? null) !== (seenLive?.id ?? null) || replaced.map((a) => a.id).join() !== seenReplaced.map((a) => a.id).join()) {
        return CHANGED;
      }
      if (refusal) {
        const override = refusal.forceable ? ' (force to override)' : '';
        throw new AppError(refusal.code, `refusing to resolve ${intentId} as ${resolution}: ${refusal.reason}${override}`);
      }

      if (resolution === 'settled') {
        if (!attempt) throw new AppError('INVALID_STATE', `payment intent ${intentId} has no transfer to settle`);
        const fee = verdict?.kind === 'final' ? verdict.feeNative : 0n;
        await markConfirmed(tx, [{ attemptId: attempt.id, feeNative: fee }], now);
        await settleIntent(tx, deps.config.chains, intent, attempt, fee, now);
        return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt.tx_id };
      }

      if (resolution === 'retry') {
        if (attempt) return CHANGED; // a transfer appeared meanwhile: the next round refuses
        await moveAndTell(tx, [{ intent, to: 'retrying', reason: 'operator_retry' }], now);
        // The attempt number follows the intent's history (src/domain/execution.ts): this run is the next one, and the last.
        const next = 1 + (await readExecutionFacts(tx, [intent.id])).get(intent.id)!.retries;
        await enqueueExecutions(deps.boss, tx, [{ payment_intent_id: intent.id, attempt: next }]);
        return { payment_intent_id: intent.id, status: intent.status, tx_id: null };
      }

      if (resolution === 'failed') {
        // Forced over a transfer that may still land: only a request, carried out once another operator approves it
        // (force-fail.ts, decision 181); the funds stay where they are meanwhile.
        if (contradiction) {
          await requestForcedFailure(tx, intent, attempt, options.audit.actor.id, now);
          return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt?.tx_id ?? null, approval: 'pending' };
        }
        await failFromManualReview(tx, deps.config.chains, intent, attempt, verdict, now);
        return { payment_intent_id: intent.id, status: intent.status, tx_id: attempt?.tx_id ?? null };
      }

      // replace / cancel_on_chain: the new transaction shares the nonce, so whichever lands, the others never do. The
      // one it supersedes is kept as 'replaced' for the record; the confirmation worker watches the new one. A
      // replacement pays every payment the stuck transaction pays (one, or an on-chain batch's): each gets its attempt.
      const cancel = resolution === 'cancel_on_chain';
      const mates = cancel ? [attempt!] : await readLiveAttemptsOfTransaction(tx, attempt!.chain, attempt!.tx_id, { forUpdate: true });
      if (mates.map((m) => m.id).join() !== (cancel ? [seenLive!] : seenMates).map((m) => m.id).join()) return CHANGED;
      const paid = mates.map((mate) => locked.get(mate.payment_intent_id)!);
      if (!paid.every((p) => WATCHED.includes(p.status))) return CHANGED;
      // A second operator's force: the first one's request is used here, once, with the replacement it allows.
      if (override && !(await markOverrideUsed(tx, override.id, options.audit.actor.id, now))) return CHANGED;
      // Nothing is signed on a chain whose books are being checked against it after a database failover (decision 199).
      const clearance = await clearToSign(tx, adapter.chain);
      if (clearance === null) {
        throw new AppError('CHAIN_HELD', `${adapter.chain}: signing is held until its treasury transactions are matched against the books (GET /admin/books)`);
      }
      const successors = await signAttempts(
        tx,
        adapter,
        paid.map((p) => ({ intent: p, prepared: prepared!, purpose: cancel ? 'cancel' : 'transfer' })),
        now,
        clearance,
      );
      const { signed } = successors[0]!;
      for (const mate of mates) {
        await markFailed(tx, mate.id, 'stuck', `${cancel ? 'cancelled on chain' : 'replaced'} by ${signed.txId}`, null, 'replaced');
      }
      // Persisted before it is sent; if the send below fails, the confirmation worker re-sends the same bytes.
      await markBroadcasted(tx, successors.map((s) => s.id), now);
      // A cancel leaves the payment in manual review (nothing for the merchant to hear until it is final); a
      // replacement is the payments' transfer again, watched like any broadcast one.
      if (!cancel) {
        const moves = paid.filter((p) => p.status === 'manual_review');
        await moveAndTell(tx, moves.map((p) => ({ intent: p, to: 'broadcasted', type: 'payment.broadcasted', extra: { tx_id: signed.txId }, reason: 'fee_bump' })), now);
      }
      return { payment_intent_id: intent.id, status: intent.status, tx_id: signed.txId, send: signed };
    });
    if (result === CHANGED) continue;
    const { send, ...outcome } = result;
    if (send) {
      await adapter
        .broadcast(send)
        .catch((error: unknown) => deps.log.warn({ err: error, payment_intent_id: intentId }, `${resolution} send failed; will be re-sent`));
    }
    return outcome;
  }
  throw new AppError('INVALID_STATE', `payment intent ${intentId} changed while it was being resolved; try again`);
}

/** The refusal that stands: null when there is none, or when `force` overrides one that allows it. */
function standingRefusal(refusal: Refusal | null, force: boolean): Refusal | null {
  return refusal && !(force && refusal.forceable) ? refusal : null;
}
