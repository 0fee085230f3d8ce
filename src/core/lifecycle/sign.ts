// Signing a prepared transfer and storing it as an attempt, in the caller's transaction: the nonce (on chains that
// have them), the signed bytes and the attempt row commit together, before anything is sent.
import type { ChainAdapter, PreparedTransfer } from '../../chains/port.js';
import type { Queryable } from '../../db/pool.js';
import { insertAttempt, type AttemptPurpose, type NewAttempt } from '../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { allocateNonce } from '../../db/queries/nonces.js';
import type { SignedTransfer } from '../../domain/chain.js';
import { newId } from '../../ids.js';

/**
 * Allocates the nonce a transfer of intent `intentId` needs, if any (its own refused nonce first, while no one else
 * took it), and signs locally (no RPC: prepareTransfer read the chain).
 */
export async function signPrepared(tx: Queryable, adapter: ChainAdapter, prepared: PreparedTransfer, intentId: string): Promise<SignedTransfer> {
  const nonce =
    prepared.pendingNonce === undefined
      ? null
      : await allocateNonce(tx, adapter.chain, adapter.treasuryAddress(), prepared.pendingNonce, intentId);
  return prepared.sign(tx, nonce);
}

/** Signs a prepared transfer of the intent as a new attempt row, not stored yet. Nothing is sent. */
export async function signNewAttempt(
  tx: Queryable,
  adapter: ChainAdapter,
  intent: PaymentIntentRow,
  prepared: PreparedTransfer,
  at: Date,
): Promise<NewAttempt> {
  return newAttempt(intent, prepared, await signPrepared(tx, adapter, prepared, intent.id), at);
}

/** The attempt row of a transfer signed for the intent. */
export function newAttempt(intent: PaymentIntentRow, prepared: PreparedTransfer, signed: SignedTransfer, at: Date): NewAttempt {
  return { id: newId('att'), payment_intent_id: intent.id, chain: intent.selected_chain, estimated_fee_usd: prepared.feeEstimate.feeUsd, created_at: at, signed };
}

/** Signs a prepared transaction of the intent (its transfer, or a cancel of it) and stores it as a new attempt. Nothing is sent. */
export async function signAttempt(
  tx: Queryable,
  adapter: ChainAdapter,
  intent: PaymentIntentRow,
  prepared: PreparedTransfer,
  at: Date,
  purpose: AttemptPurpose = 'transfer',
): Promise<{ attemptId: string; signed: SignedTransfer }> {
  const attempt = { ...(await signNewAttempt(tx, adapter, intent, prepared, at)), purpose };
  await insertAttempt(tx, attempt);
  return { attemptId: attempt.id, signed: attempt.signed };
}

export function transferRequestOf(intent: PaymentIntentRow) {
  return { paymentIntentId: intent.id, to: intent.destination_address, amountMicros: intent.amount_micros };
}
