// The simulated chains' signed bytes: JSON that names everything the node needs (the treasury, the nonce or the
// blockhash, the fee, the payouts with the payment each pays), and a tx id that is a hash of the bytes, so the same
// request signed twice alike is the same transaction, as with deterministic signatures on a real chain.
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { Chain, ChainFamily, SignedTransfer } from '../../src/domain/chain.js';
import { ChainError } from '../../src/chains/port.js';

export interface WirePayout {
  to: string;
  /** Micro-USDC, decimal. */
  amount: string;
  /** The payment it pays. */
  ref: string;
}

export interface WireTx {
  chain: Chain;
  from: string;
  purpose: 'transfer' | 'cancel';
  /** What the transaction pays the chain when it lands, in the native currency's smallest units, decimal. */
  fee: string;
  payouts: WirePayout[];
  /** EVM. */
  nonce?: number;
  /** Solana. */
  blockhash?: string;
  lastValidHeight?: number;
  memo?: string;
}

export function digest(...parts: string[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

/** An id in the chain's own shape: 0x and 64 hex digits (EVM), or a base58 signature of 64 bytes (Solana). */
export function idOf(family: ChainFamily, ...parts: string[]): string {
  const bytes = digest(...parts);
  if (family === 'evm') return `0x${bytes.toString('hex')}`;
  return getBase58Decoder().decode(Buffer.concat([bytes, digest('second half', ...parts)]));
}

export function signedOf(family: ChainFamily, body: WireTx, meta: SignedTransfer['meta']): SignedTransfer {
  const rawTx = JSON.stringify(body);
  return { txId: idOf(family, 'tx', rawTx), rawTx, meta };
}

/** The body of bytes this world signed for `chain`; anything else the node refuses as invalid, for good. */
export function decodeTx(chain: Chain, family: ChainFamily, signed: SignedTransfer): WireTx {
  let body: WireTx;
  try {
    body = JSON.parse(signed.rawTx) as WireTx;
  } catch (cause) {
    throw new ChainError('rpc_error', 'rejected', 'the node refused the transaction as invalid', { details: 'undecodable bytes', cause });
  }
  if (body.chain !== chain || idOf(family, 'tx', signed.rawTx) !== signed.txId || !Array.isArray(body.payouts)) {
    throw new ChainError('rpc_error', 'rejected', 'the node refused the transaction as invalid', { details: `not a ${chain} transaction: ${signed.txId}` });
  }
  return body;
}

export function totalOf(body: WireTx): bigint {
  return body.payouts.reduce((sum, p) => sum + BigInt(p.amount), 0n);
}
