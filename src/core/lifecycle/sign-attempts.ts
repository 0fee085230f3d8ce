// Signing prepared transactions and storing them as attempts, in the caller's transaction: the nonce (on chains that
// have them), the signed bytes and the attempt row commit together, before anything is sent. One function for one
// transaction (an operator's replacement or cancel) or a batch (an execution's signatures, src/core/execution/sign.ts).
import type { ChainAdapter, PreparedTransfer } from '../../chains/port.js';
import type { Queryable } from '../../db/pool.js';
import { insertAttempts, type AttemptPurpose, type NewAttempt } from '../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { allocateNonce } from '../../db/queries/nonces.js';
import type { SignedTransfer } from '../../domain/chain.js';
import { newId } from '../../ids.js';

/**
 * Allocates the nonce a transfer of intent `intentId` needs, if any (its own refused nonce first, while no one else
 * took it), and signs locally (no RPC: the preparation read the chain).
 */
export async function signPrepared(tx: Queryable, adapter: ChainAdapter, prepared: PreparedTransfer, intentId: string): Promise<SignedTransfer> {
  const nonce =
    prepared.pendingNonce === undefined
      ? null
      : await allocateNonce(tx, adapter.chain, adapter.treasuryAddress(), prepared.pendingNonce, intentId);
  return prepared.sign(tx, nonce);
}

export interface AttemptToSign {
  intent: PaymentIntentRow;
  prepared: PreparedTransfer;
  /** 'transfer' when absent. */
  purpose?: AttemptPurpose;
}

/**
 * Signs each prepared transaction of its intent and stores it as a new attempt, in order. Nothing is sent. The adapter
 * signs them all at once when it can and none needs a nonce; on a chain with nonces each attempt is stored before the
 * next signature (the next allocation reads them); the others are written together in one INSERT.
 */
export async function signAttempts(tx: Queryable, adapter: ChainAdapter, items: readonly AttemptToSign[], at: Date): Promise<NewAttempt[]> {
  const unnumbered = (item: AttemptToSign) => item.prepared.pendingNonce === undefined;
  const signedAll = adapter.signAll && items.every(unnumbered) ? await adapter.signAll(tx, items.map((item) => item.prepared)) : null;
  const attempts: NewAttempt[] = [];
  for (const [k, item] of items.entries()) {
    const signed = signedAll ? signedAll[k]! : await signPrepared(tx, adapter, item.prepared, item.intent.id);
    const attempt: NewAttempt = {
      id: newId('att'),
      payment_intent_id: item.intent.id,
      chain: item.intent.selected_chain,
      estimated_fee_usd: item.prepared.feeEstimate.feeUsd,
      created_at: at,
      signed,
      purpose: item.purpose ?? 'transfer',
    };
    attempts.push(attempt);
    if (!unnumbered(item)) await insertAttempts(tx, [attempt]);
  }
  await insertAttempts(tx, attempts.filter((_, k) => unnumbered(items[k]!)));
  return attempts;
}

export function transferRequestOf(intent: PaymentIntentRow) {
  return { paymentIntentId: intent.id, to: intent.destination_address, amountMicros: intent.amount_micros };
}
