// The Ethereum half of `stableroute devnet`: a real anvil node (the binary shipped through npm), the 6-decimal USDC,
// USDT and PYUSD stand-ins (issue 40: each with its issuer's quirks, src/devnet/Test*.sol) deployed by one account and
// minted to another, which becomes the treasury, and the batch-transfer contract (issue 28). Tests use it too, so it has to start fast, fail with a clear message, and never outlive its caller.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  getAddress,
  http,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { BATCH_CONTRACT_ABI } from '../chains/ethereum/batch-contract.js';
import { BATCH_CONTRACT_BYTECODE } from './batch-contract-bytecode.js';
import { fundEthereumAddress, type EthereumFunding } from './ethereum-fund.js';
import { mintTransactions, sendMint, tokenAddress, type DevnetTokenAddresses } from './ethereum-tokens.js';
import { DEVNET_TOKENS, type DevnetToken } from './tokens.js';
import { TEST_PYUSD_ABI, TEST_PYUSD_BYTECODE } from './pyusd-token.js';
import { TEST_USDC_ABI, TEST_USDC_BYTECODE } from './usdc-token.js';
import { TEST_USDT_ABI, TEST_USDT_BYTECODE } from './usdt-token.js';

/** The chain id of the devnet's Ethereum node (anvil's own default); other devnet chains take their own (src/cli/devnet.ts). */
export const DEVNET_CHAIN_ID = 31337;
/** anvil's own default mnemonic, passed explicitly so the keys below stay right if anvil ever changes its default. */
export const DEVNET_MNEMONIC = 'test test test test test test test test test test test junk';
// Accounts 0 and 1 of DEVNET_MNEMONIC. Public test keys printed by every anvil: never fund them on a real network.
export const DEPLOYER_KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const TREASURY_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

const DEFAULT_TREASURY_MICROS = 1_000_000n * 1_000_000n;
const READY_TIMEOUT_MS = 15_000;
const READY_POLL_MS = 50;
const STOP_TIMEOUT_MS = 5_000;
const START_ATTEMPTS = 3; // a free port can be taken between our probe and anvil's bind
const RPC_TIMEOUT_MS = 10_000;
const RECEIPT_TIMEOUT_MS = 60_000;

export interface EthereumDevnetOptions {
  /** Port to listen on (127.0.0.1); default: a free one. */
  port?: number;
  /** USDC minted to the treasury, in micro-units; default 1,000,000 USDC. */
  treasuryUsdc?: bigint;
  /** USDT minted to the treasury, in micro-units; default 1,000,000 USDT. */
  treasuryUsdt?: bigint;
  /** PYUSD minted to the treasury, in micro-units; default 1,000,000 PYUSD. */
  treasuryPyusd?: bigint;
  /** Mine a block every so many seconds instead of one per transaction (automine). */
  blockTimeSeconds?: number;
  /** The chain id the node reports (eth_chainId) and signatures bind to; default DEVNET_CHAIN_ID. */
  chainId?: number;
  /**
   * Move the `finalized` and `safe` block tags with the blocks, 2 and 1 behind the latest, instead of anvil's 64 and 32
   * (an epoch of one slot, not 32): a chain whose finality rule reads a tag (a rollup preset) settles within seconds.
   * Off by default, so the Ethereum devnet stays as it always was; its rule counts confirmations and never reads a tag.
   */
  tagsFollowBlocks?: boolean;
  /** Stops a start-up in progress: anvil is killed at once and the start rejects with the signal's reason. */
  signal?: AbortSignal;
  logger?: Logger;
}

export interface EthereumDevnet extends DevnetTokenAddresses {
  rpcUrl: string;
  /** The batch-transfer contract (src/devnet/BatchTransfer.sol): many payouts in one transaction. */
  batchContractAddress: Address;
  /** Hex private key of the funded treasury (a public anvil test key). */
  treasuryKey: Hex;
  treasuryAddress: Address;
  chainId: number;
  /** Gives an address ETH and mints it test tokens (a treasury whose key is elsewhere, e.g. in a PKCS#11 token). */
  fund(address: Address, funding: EthereumFunding): Promise<void>;
  stop(): Promise<void>;
}

export class DevnetError extends Error {
  override readonly name = 'DevnetError';
}

/** Path of the anvil binary for this platform, from the @foundry-rs/anvil-<os>-<arch> package npm installed. */
export function anvilBinaryPath(): string {
  const os = { linux: 'linux', darwin: 'darwin', win32: 'win32' }[process.platform as string];
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (!os || !arch) throw new DevnetError(`anvil is not shipped for ${process.platform}/${process.arch}`);
  const pkg = `@foundry-rs/anvil-${os}-${arch}`;
  let packageJson: string;
  try {
    packageJson = createRequire(import.meta.url).resolve(`${pkg}/package.json`);
  } catch (cause) {
    throw new DevnetError(`${pkg} is not installed (optional dependency of @foundry-rs/anvil); run npm ci`, { cause });
  }
  const binary = join(dirname(packageJson), 'bin', os === 'win32' ? 'anvil.exe' : 'anvil');
  if (!existsSync(binary)) throw new DevnetError(`anvil binary missing at ${binary}`);
  return binary;
}

export async function startEthereumDevnet(options: EthereumDevnetOptions = {}): Promise<EthereumDevnet> {
  const log = options.logger;
  const signal = options.signal;
  const chainId = options.chainId ?? DEVNET_CHAIN_ID;
  if (!Number.isSafeInteger(chainId) || chainId < 1) throw new DevnetError(`chain id must be a positive integer, got ${chainId}`);
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = options.port ?? (await freePort());
    signal?.throwIfAborted();
    const node = spawnAnvil(port, chainId, options);
    const rpcUrl = `http://127.0.0.1:${port}`;
    // Killing the node makes whatever start-up step is waiting on it fail at once.
    const abort = () => void node.stop();
    signal?.addEventListener('abort', abort, { once: true });
    try {
      await waitUntilReady(rpcUrl, node, chainId);
      const treasuryMicros = {
        usdc: options.treasuryUsdc ?? DEFAULT_TREASURY_MICROS,
        usdt: options.treasuryUsdt ?? DEFAULT_TREASURY_MICROS,
        pyusd: options.treasuryPyusd ?? DEFAULT_TREASURY_MICROS,
      };
      const deployed = await deployContracts(rpcUrl, treasuryMicros, signal);
      signal?.throwIfAborted();
      signal?.removeEventListener('abort', abort);
      const { usdcAddress, usdtAddress, pyusdAddress, batchContractAddress } = deployed;
      log?.info({ rpcUrl, chainId, usdcAddress, usdtAddress, pyusdAddress, batchContractAddress }, 'ethereum devnet ready');
      return {
        rpcUrl,
        usdcAddress,
        usdtAddress,
        pyusdAddress,
        batchContractAddress,
        treasuryKey: TREASURY_KEY,
        treasuryAddress: deployed.treasuryAddress,
        chainId,
        fund: (address, funding) => fundEthereumAddress({ rpcUrl, usdcAddress, usdtAddress, pyusdAddress, ownerKey: DEPLOYER_KEY }, address, funding),
        stop: () => node.stop(),
      };
    } catch (error) {
      signal?.removeEventListener('abort', abort);
      lastError = error;
      const exitedEarly = node.exitedEarly();
      await node.stop();
      signal?.throwIfAborted();
      // Only a lost race for a port we picked ourselves is worth another try.
      if (options.port !== undefined || !exitedEarly) break;
      log?.warn({ port, attempt }, 'anvil exited during start-up; retrying on another port');
    }
  }
  throw lastError;
}

/** Turns mining on every transaction on or off; with it off, transactions wait in the pool until mineBlocks. */
export async function setAutomine(rpcUrl: string, enabled: boolean): Promise<void> {
  await testClient(rpcUrl).setAutomine(enabled);
}

/** Mines `count` blocks at once (anvil_mine), including whatever the pool holds. */
export async function mineBlocks(rpcUrl: string, count = 1): Promise<void> {
  await testClient(rpcUrl).mine({ blocks: count });
}

function testClient(rpcUrl: string) {
  return createTestClient({ mode: 'anvil', transport: http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 }) });
}

interface AnvilProcess {
  stop(): Promise<void>;
  exitedEarly(): boolean;
  exited: Promise<string>;
}

function spawnAnvil(port: number, chainId: number, options: Pick<EthereumDevnetOptions, 'blockTimeSeconds' | 'tagsFollowBlocks'>): AnvilProcess {
  const args = ['--silent', '--host', '127.0.0.1', '--port', String(port)];
  args.push('--chain-id', String(chainId), '--mnemonic', DEVNET_MNEMONIC, '--accounts', '3');
  if (options.blockTimeSeconds !== undefined) args.push('--block-time', String(options.blockTimeSeconds));
  // anvil tags the block `slots-in-an-epoch` back `safe` and twice that `finalized` (from block 2 on with one slot).
  if (options.tagsFollowBlocks) args.push('--slots-in-an-epoch', '1');
  const child: ChildProcess = spawn(anvilBinaryPath(), args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  let done = false;
  const exited = new Promise<string>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve(`anvil exited (code ${code ?? 'none'}, signal ${signal ?? 'none'}): ${stderr.trim() || 'no output'}`);
    });
    child.once('error', (error) => {
      done = true;
      resolve(`anvil failed to start: ${error.message}`);
    });
  });
  // A caller that exits (process.exit, an uncaught error) must not leave an orphaned node holding the port. Death by
  // a signal skips 'exit' handlers: a long-lived caller installs signal handlers that call stop() (src/cli/devnet.ts).
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let stopping = false;
  return {
    exited,
    exitedEarly: () => done && !stopping,
    async stop() {
      stopping = true;
      process.removeListener('exit', killOnExit);
      if (done) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitUntilReady(rpcUrl: string, node: AnvilProcess, chainId: number): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exitReason: string | undefined;
  void node.exited.then((reason) => (exitReason = reason));
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    if (exitReason) throw new DevnetError(exitReason);
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
        signal: AbortSignal.timeout(1_000),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined && Number(body.result) === chainId) return;
      lastError = `unexpected answer ${JSON.stringify(body)}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
  throw new DevnetError(`anvil did not answer eth_chainId at ${rpcUrl} within ${READY_TIMEOUT_MS} ms: ${lastError}`);
}

interface DeployedContracts extends DevnetTokenAddresses {
  batchContractAddress: Address;
  treasuryAddress: Address;
}

async function deployContracts(rpcUrl: string, treasuryMicros: Record<DevnetToken, bigint>, signal: AbortSignal | undefined): Promise<DeployedContracts> {
  const transport = http(rpcUrl, { timeout: RPC_TIMEOUT_MS, retryCount: 1 });
  const publicClient = createPublicClient({ transport });
  const deployer = privateKeyToAccount(DEPLOYER_KEY);
  const treasury = privateKeyToAccount(TREASURY_KEY);
  const wallet = createWalletClient({ account: deployer, transport });
  // Our own polling rather than viem's waitForTransactionReceipt, which retries a dead node until its timeout: a
  // start-up that is stopped (anvil killed, signal aborted) must end at once.
  const receiptOf = async (hash: Hex): Promise<TransactionReceipt> => {
    const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
    for (;;) {
      try {
        return await publicClient.getTransactionReceipt({ hash });
      } catch (error) {
        if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      }
      if (Date.now() > deadline) throw new DevnetError(`no receipt for ${hash} within ${RECEIPT_TIMEOUT_MS} ms`);
      await delay(READY_POLL_MS, undefined, { signal });
    }
  };

  // Every deployment, then every mint, is sent before any is awaited, so that with a block time they share a block
  // or two instead of adding one each to the start-up; explicit nonces, so none reuses another's. USDC and the batch
  // contract come first, so their addresses stay those of the devnets before issue 40.
  const nonce = await publicClient.getTransactionCount({ address: deployer.address, blockTag: 'pending' });
  const usdcHash = await wallet.deployContract({ abi: TEST_USDC_ABI, bytecode: TEST_USDC_BYTECODE, nonce, chain: null });
  const batchHash = await wallet.deployContract({ abi: BATCH_CONTRACT_ABI, bytecode: BATCH_CONTRACT_BYTECODE, nonce: nonce + 1, chain: null });
  const usdtHash = await wallet.deployContract({ abi: TEST_USDT_ABI, bytecode: TEST_USDT_BYTECODE, nonce: nonce + 2, chain: null });
  const pyusdHash = await wallet.deployContract({ abi: TEST_PYUSD_ABI, bytecode: TEST_PYUSD_BYTECODE, nonce: nonce + 3, chain: null });
  const addresses: DevnetTokenAddresses = {
    usdcAddress: deployedAddress(await receiptOf(usdcHash), 'USDC'),
    usdtAddress: deployedAddress(await receiptOf(usdtHash), 'USDT'),
    pyusdAddress: deployedAddress(await receiptOf(pyusdHash), 'PYUSD'),
  };
  const batchContractAddress = deployedAddress(await receiptOf(batchHash), 'batch-transfer contract');
  const mints: { token: DevnetToken; hashes: Hex[] }[] = [];
  let next = nonce + 4;
  for (const token of DEVNET_TOKENS) {
    if (treasuryMicros[token] === 0n) continue;
    mints.push({ token, hashes: await sendMint(wallet, token, tokenAddress(addresses, token), treasury.address, treasuryMicros[token], { nonce: next }) });
    next += mintTransactions(token);
  }
  for (const { token, hashes } of mints) {
    for (const hash of hashes) {
      if ((await receiptOf(hash)).status !== 'success') throw new DevnetError(`${token.toUpperCase()} mint failed in tx ${hash}`);
    }
  }
  return { ...addresses, batchContractAddress, treasuryAddress: treasury.address };
}

function deployedAddress(receipt: TransactionReceipt, what: string): Address {
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new DevnetError(`${what} deployment failed in tx ${receipt.transactionHash}`);
  }
  return getAddress(receipt.contractAddress);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
