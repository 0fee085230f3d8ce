// The Solana half of `stableroute devnet`: LiteSVM (the real SVM and SPL programs, in process) behind a standard
// Solana JSON-RPC endpoint on 127.0.0.1, with USDC and USDT mints (SPL Token), a PYUSD mint (Token-2022, with
// mainnet's extensions) and a funded treasury. Slots tick on a timer like a real
// cluster; tests pause the ticker and advance slots explicitly instead of sleeping.
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { accountMethods } from './solana-rpc/account-methods.js';
import { HISTORY_MAX, SolanaDevnetChain } from './solana-rpc/chain.js';
import { clusterMethods } from './solana-rpc/cluster-methods.js';
import { writeGenesis } from './solana-rpc/genesis.js';
import { freezeAddress, fundAddress, type Funding } from './solana-rpc/fund.js';
import { createRpcServer } from './solana-rpc/server.js';
import { transactionMethods } from './solana-rpc/transaction-methods.js';
import { devnetMethods } from './solana-rpc/devnet-methods.js';
import type { DevnetToken } from './tokens.js';

const DEFAULT_TREASURY_MICROS = 1_000_000n * 1_000_000n;
const DEFAULT_TREASURY_LAMPORTS = 100n * 1_000_000_000n;
const DEFAULT_SLOT_MS = 400;
const DEFAULT_FINALIZE_AFTER_SLOTS = 32;
const ADVANCE_MAX_SLOTS = 100_000;

export interface SolanaDevnetOptions {
  /** Port on 127.0.0.1; default: a free one. */
  port?: number;
  /** USDC in the treasury's token account, in micro-units; default 1,000,000 USDC. */
  treasuryUsdc?: bigint;
  /** USDT and PYUSD in the treasury's token accounts, in micro-units; default 1,000,000 each. */
  treasuryUsdt?: bigint;
  treasuryPyusd?: bigint;
  /** SOL for fees and rent, in lamports; default 100 SOL. */
  treasuryLamports?: bigint;
  /** Wall-clock time per slot; default 400 ms. */
  slotMs?: number;
  /** Slots after which a transaction is finalized; default 32. */
  finalizeAfterSlots?: number;
  /** Transactions kept in the history (getTransaction, getSignaturesForAddress); default 20,000. */
  historyMax?: number;
  logger?: Pick<Logger, 'info' | 'debug' | 'error'>;
}

export interface SolanaDevnet {
  rpcUrl: string;
  usdcMint: string;
  /** A classic SPL Token mint, as Tether's on Solana. */
  usdtMint: string;
  /** A Token-2022 mint with mainnet PYUSD's extensions (src/devnet/solana-rpc/token-2022.ts). */
  pyusdMint: string;
  /** Base58 64-byte secret key of the funded treasury, generated for this devnet. */
  treasuryKey: string;
  treasuryAddress: string;
  /** Stops the slot ticker: statuses and blockhashes stay where they are until resume() or advanceSlots(). */
  pause(): void;
  resume(): void;
  /** Moves the chain forward at once (at most 100,000 slots per call). */
  advanceSlots(count: number): void;
  /** The current (processed) slot. */
  slot(): bigint;
  /** Gives an address SOL and tokens (a treasury whose key is elsewhere, e.g. in a PKCS#11 token). */
  fund(address: string, funding: Funding): Promise<void>;
  /** Freezes an address's token account (default USDC), as the mint's freeze authority does: transfers to it then fail. */
  freeze(address: string, token?: DevnetToken): Promise<void>;
  stop(): Promise<void>;
}

export class SolanaDevnetError extends Error {
  override readonly name = 'SolanaDevnetError';
}

export async function startSolanaDevnet(options: SolanaDevnetOptions = {}): Promise<SolanaDevnet> {
  const slotMs = options.slotMs ?? DEFAULT_SLOT_MS;
  const finalizeAfterSlots = options.finalizeAfterSlots ?? DEFAULT_FINALIZE_AFTER_SLOTS;
  if (!(slotMs >= 1)) throw new SolanaDevnetError(`slotMs must be at least 1, got ${slotMs}`);
  if (!Number.isInteger(finalizeAfterSlots) || finalizeAfterSlots < 1) {
    throw new SolanaDevnetError(`finalizeAfterSlots must be a positive integer, got ${finalizeAfterSlots}`);
  }
  const treasuryUsdcMicros = options.treasuryUsdc ?? DEFAULT_TREASURY_MICROS;
  const treasuryUsdtMicros = options.treasuryUsdt ?? DEFAULT_TREASURY_MICROS;
  const treasuryPyusdMicros = options.treasuryPyusd ?? DEFAULT_TREASURY_MICROS;
  const treasuryLamports = options.treasuryLamports ?? DEFAULT_TREASURY_LAMPORTS;
  if ([treasuryUsdcMicros, treasuryUsdtMicros, treasuryPyusdMicros, treasuryLamports].some((amount) => amount < 0n)) {
    throw new SolanaDevnetError('treasury balances must be >= 0');
  }

  const seed = randomBytes(16).toString('hex');
  const historyMax = options.historyMax ?? HISTORY_MAX;
  if (!Number.isInteger(historyMax) || historyMax < 1) throw new SolanaDevnetError(`historyMax must be a positive integer, got ${historyMax}`);
  const chain = new SolanaDevnetChain({ finalizeAfterSlots, slotMs, seed, now: Date.now, historyMax });
  const genesis = await writeGenesis(chain.svm, { treasuryUsdcMicros, treasuryUsdtMicros, treasuryPyusdMicros, treasuryLamports });
  const server = createRpcServer(
    { ...clusterMethods(chain, seed), ...accountMethods(chain, genesis.mints), ...transactionMethods(chain), ...devnetMethods(chain, genesis.mints) },
    options.logger,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', (cause) =>
      reject(new SolanaDevnetError(`cannot listen on 127.0.0.1:${options.port ?? 0}`, { cause })),
    );
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const rpcUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let ticker: NodeJS.Timeout | undefined;
  const resume = () => {
    if (ticker) return;
    ticker = setInterval(() => chain.advance(1), slotMs);
    ticker.unref(); // the HTTP server, not the clock, keeps a devnet process alive
  };
  const pause = () => {
    clearInterval(ticker);
    ticker = undefined;
  };
  let stopped: Promise<void> | undefined;
  resume();
  options.logger?.info(
    { rpcUrl, usdcMint: genesis.usdcMint, usdtMint: genesis.mints.usdt.address, pyusdMint: genesis.mints.pyusd.address, treasuryAddress: genesis.treasuryAddress },
    'solana devnet ready',
  );

  return {
    rpcUrl,
    usdcMint: genesis.usdcMint,
    usdtMint: genesis.mints.usdt.address,
    pyusdMint: genesis.mints.pyusd.address,
    treasuryKey: genesis.treasuryKey,
    treasuryAddress: genesis.treasuryAddress,
    pause,
    resume,
    advanceSlots: (count) => {
      if (!Number.isInteger(count) || count < 0 || count > ADVANCE_MAX_SLOTS) {
        throw new SolanaDevnetError(`advanceSlots: expected an integer from 0 to ${ADVANCE_MAX_SLOTS}, got ${count}`);
      }
      chain.advance(count);
    },
    slot: () => chain.slotAt('processed'),
    fund: (address, funding) => fundAddress(chain.svm, genesis.mints, address, funding),
    freeze: (address, token = 'usdc') => freezeAddress(chain.svm, genesis.mints[token], address),
    stop: () =>
      (stopped ??= new Promise<void>((resolve) => {
        pause();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}
