// The real Ethereum adapter: USDC `transfer` calls from the treasury, signed locally with EIP-1559 fees, nonces
// allocated in PostgreSQL, sent through any JSON-RPC endpoint. The private key lives only inside the viem account
// created here; it is never logged, returned or put in an error. Every method that talks to the node finishes within
// RPC_TIMEOUT_SECONDS as a whole (rpc.ts), because its callers may hold database row locks while they wait.
import type { Logger } from 'pino';
import { getAddress, isAddress, zeroAddress, type Address, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { ConfigError } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import { nativeToUsd } from '../../money.js';
import {
  ChainError,
  type ChainAdapter,
  type FeeEstimate,
  type HealthProbe,
  type SignedTransfer,
  type TransferRequest,
  type TxStatus,
} from '../port.js';
import { broadcastTransfer } from './broadcast.js';
import { decodeTransfer, encodeTransfer, readBalance, TYPICAL_TRANSFER_GAS } from './erc20.js';
import { toChainError } from './errors.js';
import { marketFees, readFeeMarket, replacementFees, type FeeMarket } from './fees.js';
import { estimateTransferGas } from './gas.js';
import { allocateNonce } from './nonces.js';
import { createEthereumRpc, timeoutMs, withDeadline } from './rpc.js';
import { readTransferStatus } from './status.js';
import { verifyUsdcToken } from './token.js';
import { parseSignedTransfer, signTransaction } from './transaction.js';

export interface EthereumAdapterOptions {
  rpcUrl: string;
  usdcAddress: string;
  /** Hex private key of the treasury, with or without 0x. */
  treasuryKey: string;
  /** Blocks (including the one holding the transaction) until a transfer is final. */
  confirmations: number;
  ethUsdPrice: number;
  /** Bounds each adapter call as a whole, however many requests it makes. */
  rpcTimeoutSeconds: number;
  logger?: Logger;
}

const SECONDS_PER_BLOCK = 12;
const ETH_DECIMALS = 18;

/**
 * Builds the adapter and checks, once, that the configured token has USDC's 6 decimals: a wrong token stops
 * start-up with a ConfigError naming ETHEREUM_USDC_ADDRESS. A node that cannot be asked does not stop start-up (the
 * health collector reports it); the check then runs again before the first transfer, which it refuses until it passes.
 */
export async function createEthereumAdapter(options: EthereumAdapterOptions): Promise<ChainAdapter> {
  const account = treasuryAccount(options.treasuryKey);
  const token = tokenAddress(options.usdcAddress);
  if (!Number.isInteger(options.confirmations) || options.confirmations < 1) {
    throw new TypeError(`confirmations must be a positive integer, got ${options.confirmations}`);
  }
  const rpc = createEthereumRpc(options.rpcUrl, options.rpcTimeoutSeconds);
  const log = options.logger?.child({ chain: 'ethereum' });
  const from = account.address;
  const finalitySeconds = options.confirmations * SECONDS_PER_BLOCK;
  const deadlineMs = timeoutMs(options.rpcTimeoutSeconds);
  const within = <T>(work: () => Promise<T>) => withDeadline(deadlineMs, work);

  // Facts that never change under a running node: ask once, and again only after an ask that failed for an outage.
  const chainId = once(() => rpc.getChainId(), () => true);
  const tokenVerified = once(() => verifyUsdcToken(rpc, token), (error) => !(error instanceof ConfigError));
  try {
    await within(tokenVerified);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    log?.warn({ err: summary(error) }, 'could not read the USDC token decimals; checking again before the first transfer');
  }

  // The treasury paying itself, or the token contract, moves nothing that the ledger could settle.
  const ownAddresses = new Set([from.toLowerCase(), token.toLowerCase()]);
  const isValidRecipient = (candidate: string) => isWellFormedAddress(candidate) && !ownAddresses.has(candidate.toLowerCase());

  function transferData(request: TransferRequest): Hex {
    if (!isValidRecipient(request.to)) {
      const why = ownAddresses.has(request.to.toLowerCase())
        ? 'the recipient is the treasury or the USDC token contract itself'
        : 'not a valid Ethereum address';
      throw new ChainError('invalid_destination', 'rejected', why, { details: request.to });
    }
    if (request.amountMicros <= 0n) {
      throw new ChainError('internal_error', 'rejected', 'transfer amount must be positive', {
        details: String(request.amountMicros),
      });
    }
    return encodeTransfer(getAddress(request.to.toLowerCase()), request.amountMicros);
  }

  function feeEstimate(market: FeeMarket): FeeEstimate {
    const feeNative = TYPICAL_TRANSFER_GAS * (market.baseFeePerGas + market.maxPriorityFeePerGas);
    return { feeNative, feeUsd: nativeToUsd(feeNative, ETH_DECIMALS, options.ethUsdPrice) };
  }

  return {
    chain: 'ethereum',
    kind: 'rpc',
    nativeCurrency: 'ETH',
    nativeDecimals: ETH_DECIMALS,
    typicalFinalitySeconds: finalitySeconds,

    treasuryAddress: () => from,

    isValidAddress: isValidRecipient,

    async estimateFee(): Promise<FeeEstimate> {
      try {
        return feeEstimate(await within(() => readFeeMarket(rpc)));
      } catch (error) {
        throw toChainError(error, { operation: 'fee estimate' });
      }
    },

    async signTransfer(db: Queryable, request: TransferRequest): Promise<SignedTransfer> {
      // 1. Validate: an invalid request is our caller's bug or a bad destination, never worth an RPC call.
      const data = transferData(request);
      // 2. Read the chain before taking the nonce lock, so the lock is held only for a few statements and a signature
      //    (the fee estimate for the attempt row travels with the signed transfer: no RPC call under the lock).
      let prepared: [void, number, FeeMarket, bigint, number];
      try {
        prepared = await within(() =>
          Promise.all([
            tokenVerified(),
            chainId(),
            readFeeMarket(rpc),
            estimateTransferGas({
              rpc,
              from,
              token,
              data,
              amountMicros: request.amountMicros,
              onFallback: (error) => log?.warn({ err: summary(error) }, 'gas estimate failed; using the fixed limit'),
            }),
            rpc.getTransactionCount({ address: from, blockTag: 'pending' }),
          ]),
        );
      } catch (error) {
        if (error instanceof ConfigError) throw new ChainError('internal_error', 'rejected', error.message, { cause: error });
        throw toChainError(error, { operation: 'preparing the transfer', outcome: 'rejected' });
      }
      const [, id, market, gas, pendingCount] = prepared;
      // 3. Allocate the nonce in the caller's transaction; it commits together with the persisted attempt.
      const nonce = await allocateNonce(db, from, pendingCount);
      // 4. Sign locally. Nothing is sent.
      const fees = marketFees(market);
      const signed = await signTransaction(account, { chainId: id, nonce, to: token, data, gas, ...fees });
      log?.debug({ txId: signed.txId, nonce, paymentIntentId: request.paymentIntentId }, 'ethereum transfer signed');
      return { ...signed, feeEstimate: feeEstimate(market) };
    },

    async broadcast(signed: SignedTransfer): Promise<void> {
      try {
        await within(() => broadcastTransfer(rpc, signed, log));
      } catch (error) {
        // A timeout here leaves the outcome unknown: the bytes may have reached the node.
        throw toChainError(error, { operation: 'eth_sendRawTransaction' });
      }
    },

    async getStatus(signed: SignedTransfer): Promise<TxStatus> {
      try {
        return await within(() => readTransferStatus({ rpc, from, confirmations: options.confirmations }, signed));
      } catch (error) {
        throw toChainError(error, { operation: 'transaction status' });
      }
    },

    async probe(): Promise<HealthProbe> {
      const started = performance.now();
      try {
        const market = await within(async () => {
          await rpc.getBlockNumber();
          return readFeeMarket(rpc);
        });
        return {
          ok: true,
          latencyMs: performance.now() - started,
          fee: feeEstimate(market),
          finalitySeconds,
          congestion: market.congestion,
        };
      } catch (error) {
        const { shortMessage } = toChainError(error, { operation: 'probe' });
        return { ok: false, latencyMs: performance.now() - started, error: shortMessage };
      }
    },

    async treasuryUsdcBalance(): Promise<bigint> {
      try {
        return await within(() => readBalance(rpc, token, from));
      } catch (error) {
        throw toChainError(error, { operation: 'USDC balanceOf' });
      }
    },

    // No nonce is allocated: the replacement reuses the stuck one, so the database is not touched.
    async replaceWithHigherFee(_db: Queryable, request: TransferRequest, stuck: SignedTransfer) {
      // The replacement is rebuilt from the stuck bytes (same nonce, token, call data, gas), so it can only ever be
      // the same transfer; the request is checked against them rather than trusted.
      const tx = parseSignedTransfer(stuck);
      const call = decodeTransfer(tx.data);
      if (
        getAddress(tx.to) !== token ||
        !call ||
        call.to.toLowerCase() !== request.to.toLowerCase() ||
        call.amountMicros !== request.amountMicros
      ) {
        throw new ChainError('internal_error', 'rejected', 'the stuck transaction is not this transfer', {
          details: `stuck tx ${tx.hash} pays ${call?.amountMicros ?? '?'} to ${call?.to ?? '?'} via ${tx.to}`,
        });
      }
      let market: FeeMarket;
      try {
        market = await within(() => readFeeMarket(rpc));
      } catch (error) {
        throw toChainError(error, { operation: 'fee market for a replacement', outcome: 'rejected' });
      }
      const fees = replacementFees(tx, market);
      const { chainId: id, nonce, to, data, gas } = tx;
      const signed = await signTransaction(account, { chainId: id, nonce, to, data, gas, ...fees });
      log?.info({ txId: signed.txId, replaces: tx.hash, ...signed.meta }, 'ethereum transfer re-signed with higher fees');
      return { ...signed, feeEstimate: feeEstimate(market) };
    },
  };
}

/**
 * Mixed case must carry a valid EIP-55 checksum; all lower or all upper case carries none (EIP-55), which viem's
 * strict check would refuse for upper case. The zero address is refused: USDC reverts on it.
 */
export function isWellFormedAddress(candidate: string): boolean {
  const allUpper = /^0x[0-9A-F]{40}$/.test(candidate);
  const normalised = allUpper ? candidate.toLowerCase() : candidate;
  return isAddress(normalised, { strict: true }) && candidate.toLowerCase() !== zeroAddress;
}

/** A memoised ask whose failure is forgotten when `retriable` says so, so the next call asks again. */
function once<T>(ask: () => Promise<T>, retriable: (error: unknown) => boolean): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () =>
    (pending ??= ask().catch((error: unknown) => {
      if (retriable(error)) pending = undefined;
      throw error;
    }));
}

function treasuryAccount(key: string): LocalAccount {
  const hex = key.startsWith('0x') ? key : `0x${key}`;
  // Messages name the problem, never the value.
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError('treasuryKey must be a 32-byte hex private key');
  try {
    return privateKeyToAccount(hex as Hex);
  } catch {
    throw new TypeError('treasuryKey is not a valid secp256k1 private key');
  }
}

function tokenAddress(address: string): Address {
  if (!isAddress(address, { strict: true })) throw new TypeError(`usdcAddress is not an Ethereum address: ${address}`);
  return getAddress(address);
}

function summary(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
