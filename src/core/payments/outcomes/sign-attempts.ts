// Signing prepared transactions and storing them as attempts, in the caller's transaction: the nonce (on chains that
// have them), the signed bytes and the attempt row commit together, before anything is sent. One function for one
// transaction (an operator's replacement or cancel) or a batch (an execution's signatures, src/core/payments/execute/sign.ts).
import type { ChainAdapter, PreparedTransfer, TransferRequest } from '../../../chains/port.js';
import type { Queryable } from '../../../db/pool.js';
import { insertAttempts, type AttemptPurpose, type NewAttempt } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import { readHeldChains } from '../../../db/queries/books.js';
import { claimNonce } from '../../../db/queries/nonces.js';
import type { Chain, SignedTransfer } from '../../../domain/chain.js';
import { newId } from '../../../ids.js';

/**
 * Allocates the nonce a transfer of intent `intentId` needs, if any (its own refused nonce first, while no one else
 * took it), and signs locally (no RPC: the preparation read the chain).
 */
export async function signPrepared(tx: Queryable, adapter: ChainAdapter, prepared: PreparedTransfer, intentId: string): Promise<SignedTransfer> {
  const nonce =
    prepared.pendingNonce === undefined
      ? null
      : await claimNonce(tx, adapter.chain, adapter.treasuryAddress(), prepared.pendingNonce, intentId);
  return prepared.sign(tx, nonce);
}

declare const cleared: unique symbol;
/**
 * Proof that a chain's signing was found not held in the transaction that signs (decision 199): only clearToSign makes
 * one, and signAttempts takes one, so no signature is made without the check in its own transaction.
 */
export type SigningClearance = { readonly chain: Chain; readonly [cleared]: true };

/**
 * One statement in the caller's transaction, the one that signs: null when `chain` may not sign (its books are being
 * checked against the chain after the database history changed, or a check found them behind).
 */
export async function clearToSign(tx: Queryable, chain: Chain): Promise<SigningClearance | null> {
  return (await readHeldChains(tx, [chain])).has(chain) ? null : ({ chain } as SigningClearance);
}

/**
 * The transactions among prepared items, each with the places of the items it pays, in order of first appearance: an
 * adapter answers one object at every place of an on-chain batch it prepared (ChainAdapter.prepareTransfers).
 */
export function transactionsOf(prepared: readonly PreparedTransfer[]): Map<PreparedTransfer, number[]> {
  const places = new Map<PreparedTransfer, number[]>();
  prepared.forEach((p, k) => {
    const paid = places.get(p);
    if (paid) paid.push(k);
    else places.set(p, [k]);
  });
  return places;
}

export interface AttemptToSign {
  intent: PaymentIntentRow;
  prepared: PreparedTransfer;
  /** 'transfer' when absent. */
  purpose?: AttemptPurpose;
}

/**
 * Signs each prepared transaction once and stores one new attempt per intent it pays, in order: the intents of an
 * on-chain batch (one prepared transaction at several places) get attempts that share its signed bytes and tx id, each
 * with its share of the fee estimate. Nothing is sent. The adapter signs them all at once when it can and none needs a
 * nonce; on a chain with nonces each transaction's attempts are stored before the next signature (the next allocation
 * reads them); the others are written together in one INSERT.
 */
export async function signAttempts(
  tx: Queryable,
  adapter: ChainAdapter,
  items: readonly AttemptToSign[],
  at: Date,
  clearance: SigningClearance,
): Promise<NewAttempt[]> {
  if (clearance.chain !== adapter.chain) throw new Error(`a clearance to sign on ${clearance.chain} does not sign on ${adapter.chain}`);
  const transactions = transactionsOf(items.map((item) => item.prepared));
  const prepared = [...transactions.keys()];
  const unnumbered = (p: PreparedTransfer) => p.pendingNonce === undefined;
  const signedAll = adapter.signAll && prepared.every(unnumbered) ? await adapter.signAll(tx, prepared) : null;
  const attempts: NewAttempt[] = new Array(items.length);
  for (const [t, p] of prepared.entries()) {
    const paid = transactions.get(p)!;
    const signed = signedAll ? signedAll[t]! : await signPrepared(tx, adapter, p, items[paid[0]!]!.intent.id);
    for (const [index, k] of paid.entries()) {
      const item = items[k]!;
      attempts[k] = {
        tx_payments: paid.length,
        tx_payment_index: index,
        id: newId('att'),
        payment_intent_id: item.intent.id,
        chain: item.intent.selected_chain,
        estimated_fee_usd: p.feeEstimate.feeUsd / paid.length,
        created_at: at,
        signed,
        purpose: item.purpose ?? 'transfer',
      };
    }
    if (!unnumbered(p)) await insertAttempts(tx, paid.map((k) => attempts[k]!));
  }
  await insertAttempts(tx, attempts.filter((_, k) => unnumbered(items[k]!.prepared)));
  return attempts;
}

export function transferRequestOf(intent: PaymentIntentRow): TransferRequest {
  return { paymentIntentId: intent.id, to: intent.destination_address, amountMicros: intent.amount_micros, token: intent.token };
}
