// The Solana ChainAdapter over a JSON-RPC node, built with @solana/kit. Each port method delegates to one small
// module (transfer, broadcast, status, fees, probe, balance); this file only wires settings into them.
import { currentPosition, readInboundTransfers } from './inbound.js';
import { readTreasuryTransactions } from './treasury-history.js';
import { isAddress, type Address } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import type { Logger } from 'pino';
import { isWellFormedSolanaAddress } from '../../domain/addresses.js';
import { ChainError, onlyUsdc, type BooksLanded, type ChainAdapter, type PreparedTransfer, type TransferRequest, type TreasuryActivity } from '../port.js';
import type { SolanaSigner } from '../signers/port.js';
import { nativeBalance, tokenAccountBalance } from './balance.js';
import { broadcastTransfer } from './broadcast.js';
import { SolanaConfigError } from './errors.js';
import {
  DEFAULT_MAX_COMPUTE_UNIT_PRICE_MICRO_LAMPORTS,
  recentComputeUnitPrice,
  SOL_DECIMALS,
  transactionFee,
  transferFee,
} from './fees.js';
import { probeNode, TYPICAL_FINALITY_SECONDS } from './probe.js';
import { call, createRpcClient } from './rpc.js';
import { solanaKeyOf } from './signer.js';
import { transferStatuses } from './status.js';
import { prepareUsdcTransfers, type PreparedUsdcTransaction } from './transfer.js';

export interface SolanaAdapterOptions {
  rpcUrl: string;
  /** Base58 address of the USDC mint (classic SPL Token program, 6 decimals). */
  usdcMint: string;
  /** Signs for the treasury; closed with the adapter. */
  signer: SolanaSigner;
  solUsdPrice: number;
  rpcTimeoutSeconds: number;
  /** Cap on the priority fee price taken from recent blocks, in micro-lamports per compute unit. */
  maxComputeUnitPriceMicroLamports?: bigint;
  logger?: Pick<Logger, 'debug' | 'warn'>;
}

/** Throws SolanaConfigError when a setting cannot work. Makes no RPC call. */
export function createSolanaAdapter(options: SolanaAdapterOptions): ChainAdapter {
  const key = solanaKeyOf(options.signer);
  if (!isAddress(options.usdcMint)) {
    throw new SolanaConfigError('usdcMint', 'invalid USDC mint', 'expected a base58 address of 32 bytes');
  }
  const usdcMint: Address = options.usdcMint;
  const client = createRpcClient(options.rpcUrl, options.rpcTimeoutSeconds);
  const maxPrice = options.maxComputeUnitPriceMicroLamports ?? DEFAULT_MAX_COMPUTE_UNIT_PRICE_MICRO_LAMPORTS;
  const log = options.logger;
  const computeUnitPrice = () => recentComputeUnitPrice(client, maxPrice);
  let treasuryAtaPromise: Promise<Address> | undefined;
  const treasuryAta = () =>
    (treasuryAtaPromise ??= findAssociatedTokenPda({
      owner: key.address,
      mint: usdcMint,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    }).then(([address]) => address));

  // Solana has no nonces: the blockhash read here bounds the transfers' life instead. Several payouts share one
  // transaction where they fit (an on-chain batch); its fee estimate is the transaction's, which the core shares.
  const prepareTransfers = async (requests: readonly TransferRequest[]): Promise<(PreparedTransfer | ChainError)[]> => {
    const transactions = await prepareUsdcTransfers({ client, key, usdcMint, treasuryAta: await treasuryAta(), computeUnitPrice }, requests);
    const answers = new Map<PreparedUsdcTransaction, PreparedTransfer>();
    return transactions.map((transaction) => {
      if (transaction instanceof ChainError) return transaction;
      let answer = answers.get(transaction);
      if (!answer) {
        answer = {
          feeEstimate: transactionFee(transaction.computeUnitPrice, transaction.computeUnitLimit, options.solUsdPrice),
          async sign() {
            const signed = await transaction.sign();
            const paymentIntentIds = transaction.requests.map((r) => r.paymentIntentId);
            log?.debug({ txId: signed.txId, paymentIntentIds, meta: signed.meta }, 'solana transfer signed');
            return signed;
          },
        };
        answers.set(transaction, answer);
      }
      return answer;
    });
  };

  return {
    chain: 'solana',
    nativeCurrency: 'SOL',
    nativeDecimals: SOL_DECIMALS,
    kind: 'rpc',
    typicalFinalitySeconds: TYPICAL_FINALITY_SECONDS,
    treasuryAddress: () => key.address,
    // Refused at quote time too: a payout to the treasury itself or to the mint would move nothing.
    isValidAddress: (address) => isWellFormedSolanaAddress(address) && address !== key.address && address !== usdcMint,
    estimateFee: async () => transferFee(await computeUnitPrice(), options.solUsdPrice),
    prepareTransfers,
    broadcast: async (signed) => {
      try {
        await broadcastTransfer(client, signed);
      } catch (error) {
        if (error instanceof ChainError) {
          const { reason, outcome, details } = error;
          log?.warn({ txId: signed.txId, reason, outcome, details }, error.shortMessage);
        }
        throw error;
      }
    },
    getStatuses: (signed) => transferStatuses(client, key.address, signed),
    // The confirmed slot moves every ~400 ms; a transfer becomes included or final only when it does.
    head: async () => String(await call(client, 'getSlot', client.rpc.getSlot({ commitment: 'confirmed' }))),
    probe: () =>
      probeNode(client, options.solUsdPrice, async () => ({
        microLamports: await computeUnitPrice(),
        maxMicroLamports: maxPrice,
      })),
    treasuryTokenBalance: async (token) => (onlyUsdc(token), tokenAccountBalance(client, await treasuryAta())),
    treasuryNativeBalance: async () => nativeBalance(client, key.address),
    inboundPosition: async () => currentPosition({ client, treasury: key.address, treasuryAta: await treasuryAta(), usdcMint }),
    listInboundTransfers: async (position) => readInboundTransfers({ client, treasury: key.address, treasuryAta: await treasuryAta(), usdcMint }, position),
    treasuryTransactions: (books: BooksLanded): Promise<TreasuryActivity> => readTreasuryTransactions({ client, treasury: key.address, usdcMint }, books),
    close: () => options.signer.close(),
  };
}
