// The adapter-specific part of a SignedTransfer, persisted by the workers as JSON. Bigints travel as strings.
// A transaction paying one payout keeps the shape signed before batches (its payout's fields at the top); a batch
// lists its payouts in `payouts`, in the order the transaction pays them. Both decode to the same layout. The port's
// meta stays flat scalars (logs and the operator view spread it), so the list is one string:
// "paymentIntentId:recipientAta:transferIndex:createAtaIndex" per payout, ';' between payouts, '-' for no creation
// (ids and base58 addresses hold neither separator).
import { ChainError, type SignedTransfer } from '../port.js';
import type { InstructionLayout, PayoutLayout } from './errors.js';

export interface SolanaTransferMeta extends InstructionLayout {
  blockhash: string;
  /** The transaction can land only while the block height is at most this. */
  lastValidBlockHeight: bigint;
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
}

type Json = SignedTransfer['meta'];

export function encodeMeta(meta: SolanaTransferMeta): Json {
  const common = {
    blockhash: meta.blockhash,
    lastValidBlockHeight: meta.lastValidBlockHeight.toString(),
    computeUnitLimit: meta.computeUnitLimit,
    computeUnitPriceMicroLamports: meta.computeUnitPriceMicroLamports.toString(),
  };
  const [only, ...others] = meta.payouts;
  if (only && others.length === 0) {
    // The memo names the payment of a transaction of its own; the meta need not.
    const { createdAta, recipientAta, transferIndex, createAtaIndex } = only;
    return { ...common, createdAta, recipientAta, transferIndex, createAtaIndex };
  }
  return { ...common, payouts: meta.payouts.map(payoutText).join(';') };
}

function payoutText(p: PayoutLayout): string {
  return [p.paymentIntentId ?? '?', p.recipientAta, p.transferIndex, p.createAtaIndex ?? '-'].join(':');
}

function payoutOfText(text: string): PayoutLayout | null {
  const [paymentIntentId, recipientAta, transferIndex, createAtaIndex, ...rest] = text.split(':');
  const index = /^\d+$/;
  if (!paymentIntentId || !recipientAta || !index.test(transferIndex ?? '') || rest.length > 0) return null;
  if (createAtaIndex !== '-' && !index.test(createAtaIndex ?? '')) return null;
  return {
    paymentIntentId,
    recipientAta,
    transferIndex: Number(transferIndex),
    createAtaIndex: createAtaIndex === '-' ? null : Number(createAtaIndex),
    createdAta: createAtaIndex !== '-',
  };
}

export function decodeMeta(signed: SignedTransfer): SolanaTransferMeta {
  const m = signed.meta;
  const payouts = typeof m.payouts === 'string' ? m.payouts.split(';').map(payoutOfText) : [payoutOf(m)];
  const ok =
    typeof m.blockhash === 'string' &&
    typeof m.lastValidBlockHeight === 'string' &&
    /^\d+$/.test(m.lastValidBlockHeight) &&
    payouts.length > 0 &&
    payouts.every((p) => p !== null) &&
    typeof m.computeUnitLimit === 'number' &&
    typeof m.computeUnitPriceMicroLamports === 'string' &&
    /^\d+$/.test(m.computeUnitPriceMicroLamports);
  if (!ok) {
    throw new ChainError('internal_error', 'rejected', 'not a Solana signed transfer', {
      details: `txId ${signed.txId}`,
    });
  }
  return {
    blockhash: m.blockhash as string,
    lastValidBlockHeight: BigInt(m.lastValidBlockHeight as string),
    payouts: payouts as PayoutLayout[],
    computeUnitLimit: m.computeUnitLimit as number,
    computeUnitPriceMicroLamports: BigInt(m.computeUnitPriceMicroLamports as string),
  };
}

/** A transaction of one payout, as signed before batches too. */
function payoutOf(p: Json): PayoutLayout | null {
  const ok =
    typeof p.createdAta === 'boolean' &&
    typeof p.recipientAta === 'string' &&
    typeof p.transferIndex === 'number' &&
    (typeof p.createAtaIndex === 'number' || p.createAtaIndex === null);
  if (!ok) return null;
  return {
    createdAta: p.createdAta as boolean,
    recipientAta: p.recipientAta as string,
    transferIndex: p.transferIndex as number,
    createAtaIndex: p.createAtaIndex as number | null,
    paymentIntentId: null,
  };
}
