// What the simulated chain world shows the simulator besides the ChainAdapter port: every transfer that landed and
// every distinct transaction the treasury signed and sent, for the invariants (sim/invariants), and the transfers that
// arrive from outside (deposits, returns).
import type { Chain } from '../../src/domain/chain.js';

/** One payout of a transaction that is in a block of the canonical chain and did not revert. */
export interface LandedTransfer {
  chain: Chain;
  txId: string;
  /** The payment it pays, from the transaction's request (EVM) or the memo's payments (Solana). */
  paymentId: string;
  to: string;
  amountMicros: bigint;
  state: 'included' | 'final';
  /** The block (EVM) or slot (Solana) that holds it. */
  block: number;
}

/** A distinct signed transaction the chain saw on a broadcast, whatever the node answered. */
export interface SignedRecord {
  chain: Chain;
  txId: string;
  treasury: string;
  /** EVM: the nonce it spends. Null on Solana. */
  nonce: number | null;
  /** Solana: the blockhash that bounds its life and the last block height it can land at. Null on EVM. */
  blockhash: string | null;
  lastValidHeight: number | null;
  /** The payments it pays, in order; none for a cancel on chain. */
  paymentIds: string[];
  purpose: 'transfer' | 'cancel';
  /** EVM: the first transaction seen on the same (chain, treasury, nonce) when this one is another one on it. */
  replacementOf: string | null;
  firstSeenAt: Date;
  /** The chain's height (block, slot) at that first broadcast: a Solana re-sign is safe only past lastValidHeight. */
  seenAtHeight: number;
  /**
   * When it landed and reverted (a batch a recipient refused): the height from which that failure is final, after
   * which it can never land again and its payments may be signed anew. Null while it has not reverted on chain.
   */
  revertedFinalAt: number | null;
}

/** A transfer from outside: a deposit into the treasury, a recipient returning funds, or anything between others. */
export interface ExternalTransferInput {
  chain: Chain;
  from: string;
  to: string;
  currency: 'USDC' | 'native';
  /** USDC micro-units, wei or lamports; positive. */
  amountUnits: bigint;
}

/** A transaction of the treasury in a block of the canonical chain: what it cost, whatever it paid. */
export interface MinedTransaction {
  chain: Chain;
  txId: string;
  block: number;
  feeNative: bigint;
  /** Landed and failed: it paid its fee and nothing else. */
  reverted: boolean;
  purpose: 'transfer' | 'cancel';
  paymentIds: string[];
  final: boolean;
}
