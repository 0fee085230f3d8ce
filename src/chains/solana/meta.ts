// The adapter-specific part of a SignedTransfer, persisted by the workers as JSON. Bigints travel as strings.
import { ChainError, type SignedTransfer } from '../port.js';
import type { InstructionLayout } from './errors.js';

export interface SolanaTransferMeta extends InstructionLayout {
  blockhash: string;
  /** The transaction can land only while the block height is at most this. */
  lastValidBlockHeight: bigint;
  /** The transfer creates the recipient's token account; the treasury pays its rent. */
  createdAta: boolean;
  recipientAta: string;
  computeUnitLimit: number;
  computeUnitPriceMicroLamports: bigint;
}

export function encodeMeta(meta: SolanaTransferMeta): SignedTransfer['meta'] {
  return {
    blockhash: meta.blockhash,
    lastValidBlockHeight: meta.lastValidBlockHeight.toString(),
    createdAta: meta.createdAta,
    recipientAta: meta.recipientAta,
    transferIndex: meta.transferIndex,
    createAtaIndex: meta.createAtaIndex,
    computeUnitLimit: meta.computeUnitLimit,
    computeUnitPriceMicroLamports: meta.computeUnitPriceMicroLamports.toString(),
  };
}

export function decodeMeta(signed: SignedTransfer): SolanaTransferMeta {
  const m = signed.meta;
  const ok =
    typeof m.blockhash === 'string' &&
    typeof m.lastValidBlockHeight === 'string' &&
    /^\d+$/.test(m.lastValidBlockHeight) &&
    typeof m.createdAta === 'boolean' &&
    typeof m.recipientAta === 'string' &&
    typeof m.transferIndex === 'number' &&
    (typeof m.createAtaIndex === 'number' || m.createAtaIndex === null) &&
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
    createdAta: m.createdAta as boolean,
    recipientAta: m.recipientAta as string,
    transferIndex: m.transferIndex as number,
    createAtaIndex: m.createAtaIndex as number | null,
    computeUnitLimit: m.computeUnitLimit as number,
    computeUnitPriceMicroLamports: BigInt(m.computeUnitPriceMicroLamports as string),
  };
}
