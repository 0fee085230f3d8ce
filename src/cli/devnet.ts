// `stableroute devnet`: local chains for trying real-chain mode on a laptop. An anvil node (real binary from npm)
// with 6-decimal USDC, USDT and PYUSD tokens and a funded treasury, and a Solana JSON-RPC endpoint backed by LiteSVM
// with USDC and USDT mints (SPL Token), a PYUSD mint (Token-2022, its mainnet extensions) and a funded treasury. Runs until SIGINT, SIGTERM or SIGHUP, or until its parent process goes away.
// With --signer pkcs11 both treasuries are keys generated inside a fresh SoftHSM2 token instead (src/devnet/softhsm.ts):
// it prints the signer settings, never a key. `--chains base,arbitrum` adds one anvil per named EVM chain (issue 27),
// each with its own chain id, tokens and treasury, and prints CHAINS and each chain's NAME_* settings with the rest.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pino, { type Logger } from 'pino';
import type { EthereumDevnet } from '../devnet/ethereum.js';
import { CHAIN_PRESETS, DEFAULT_CHAINS } from '../domain/chain-presets.js';
import { parseChainList } from '../domain/chain.js';
import { envName } from '../config.js';
import { usage } from './exits.js';
import { DEVNET_EXTRA_CHAINS_MAX } from '../bounds.js';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const PARENT_POLL_MS = 500;
const USAGE =
  'usage: stableroute devnet [--json] [--signer key|pkcs11] [--chains NAME,...] [--ethereum-port N] [--solana-port N] [--block-time S] [--confirmations N]\n' +
  '       --chains: more EVM chains (base, arbitrum, ...), one anvil each; ethereum and solana always run\n';
// Chain ids of the extra chains, in the order --chains names them: local ids after anvil's 31337 (Ethereum's on the
// devnet), never the real networks' (8453 for base...). The devnet's treasury key is a public anvil test key and a
// signature binds to its chain id (EIP-155): one made on the devnet must never be valid on a real chain.
const FIRST_EXTRA_CHAIN_ID = 31_338;
// What the devnet gives a treasury held in the SoftHSM token, as it gives its own treasuries.
const HSM_TREASURY_MICROS = 1_000_000n * 1_000_000n;
const HSM_TREASURY_TOKENS = { usdcMicros: HSM_TREASURY_MICROS, usdtMicros: HSM_TREASURY_MICROS, pyusdMicros: HSM_TREASURY_MICROS };
const HSM_TREASURY_WEI = 100n * 10n ** 18n;
const HSM_TREASURY_LAMPORTS = 100n * 1_000_000_000n;

export async function devnetCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      json: { type: 'boolean', default: false },
      'ethereum-port': { type: 'string' },
      'solana-port': { type: 'string' },
      'block-time': { type: 'string', default: '1' },
      confirmations: { type: 'string', default: '2' },
      signer: { type: 'string', default: 'key' },
      chains: { type: 'string' },
    },
  });
  const port = (name: 'ethereum-port' | 'solana-port') => (values[name] ? Number(values[name]) : undefined);
  const blockTimeSeconds = Number(values['block-time']);
  const confirmations = Number(values.confirmations);
  const pkcs11 = values.signer === 'pkcs11';
  if (!(blockTimeSeconds > 0) || !Number.isInteger(confirmations) || confirmations < 1 || !['key', 'pkcs11'].includes(values.signer)) {
    process.stderr.write(USAGE);
    return 2;
  }
  const extraNames = extraChains(values.chains);
  if (typeof extraNames === 'string') return usage(USAGE, extraNames);
  const log = pino({ level: 'warn' }, pino.destination(2));
  // Before anything is spawned: a signal or the parent's death at any moment from here on stops anvil with us.
  const stop = watchForStop(log);
  // The chains start empty on every run, so the service's ledger must too (decision 128): a database per run, and
  // with --signer pkcs11 a token per run, side by side in the run's directory.
  const runDir = join(tmpdir(), `stableroute-devnet-${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`);
  const dataDir = join(runDir, 'data');
  const { startEthereumDevnet } = await import('../devnet/ethereum.js');
  const { startSolanaDevnet } = await import('../devnet/solana.js');
  let ethereum: Awaited<ReturnType<typeof startEthereumDevnet>> | undefined;
  let solana: Awaited<ReturnType<typeof startSolanaDevnet>> | undefined;
  /** The extra chains' nodes by name, kept as each starts: all that started are stopped, even when another failed. */
  const extras = new Map<string, EthereumDevnet>();
  try {
    // Blocks keep coming (block time), so Ethereum transfers reach ETHEREUM_CONFIRMATIONS by themselves.
    ethereum = await startEthereumDevnet({ port: port('ethereum-port'), blockTimeSeconds, logger: log, signal: stop.signal });
    solana = await startSolanaDevnet({ port: port('solana-port'), logger: log });
    // The presets of rollups and Polygon read the `finalized` tag: it follows the blocks here, 2 behind the latest.
    const started = await Promise.allSettled(
      extraNames.map((name, i) =>
        startEthereumDevnet({ chainId: FIRST_EXTRA_CHAIN_ID + i, tagsFollowBlocks: true, blockTimeSeconds, logger: log, signal: stop.signal }).then(
          (devnet) => extras.set(name, devnet),
        ),
      ),
    );
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    stop.signal.throwIfAborted();
    let treasuries = { ethereum: ethereum.treasuryAddress as string, solana: solana.treasuryAddress };
    let custody: Record<string, string> = { ETHEREUM_TREASURY_KEY: ethereum.treasuryKey, SOLANA_TREASURY_KEY: solana.treasuryKey };
    if (pkcs11) {
      const { createSoftHsmToken } = await import('../devnet/softhsm.js');
      await mkdir(runDir, { recursive: true }); // default mode: the embedded PostgreSQL user must traverse it to DATA_DIR
      const token = await createSoftHsmToken(join(runDir, 'softhsm'));
      await ethereum.fund(token.ethereumAddress, { ...HSM_TREASURY_TOKENS, wei: HSM_TREASURY_WEI });
      await solana.fund(token.solanaAddress, { ...HSM_TREASURY_TOKENS, lamports: HSM_TREASURY_LAMPORTS });
      // One EVM key pays on every EVM chain, as ETHEREUM_TREASURY_KEY does without a token.
      for (const extra of extras.values()) await extra.fund(token.ethereumAddress, { ...HSM_TREASURY_TOKENS, wei: HSM_TREASURY_WEI });
      stop.signal.throwIfAborted();
      treasuries = { ethereum: token.ethereumAddress, solana: token.solanaAddress };
      custody = {
        ETHEREUM_SIGNER: 'pkcs11',
        SOLANA_SIGNER: 'pkcs11',
        PKCS11_MODULE: token.module,
        PKCS11_TOKEN_LABEL: token.tokenLabel,
        PKCS11_PIN_FILE: token.pinFile,
        ETHEREUM_PKCS11_KEY_LABEL: token.ethereumKeyLabel,
        SOLANA_PKCS11_KEY_LABEL: token.solanaKeyLabel,
        SOFTHSM2_CONF: token.conf,
      };
    }
    // With the treasury key handed out, the devnet approves the batch contract for it, so payouts go out in batches
    // (NAME_BATCH_CONTRACT); a SoftHSM treasury signs nothing here, and pays one transaction each until it approves.
    const batching: Record<string, string> = {};
    if (!pkcs11) {
      const { approveBatchContract } = await import('../devnet/ethereum-approve.js');
      const nodes = [['ethereum', ethereum] as const, ...[...extras].map(([n, d]) => [n, d] as const)];
      // Each chain mines its own blocks: their approvals wait on one another for nothing.
      await Promise.all(nodes.map(([, node]) => approveBatchContract(node, node.treasuryKey)));
      for (const [name, node] of nodes) batching[`${envName(name)}_BATCH_CONTRACT`] = node.batchContractAddress;
    }
    const evmKey = ethereum.treasuryKey;
    const evmCustody = (name: string): Record<string, string> =>
      pkcs11
        ? { [`${envName(name)}_SIGNER`]: 'pkcs11', [`${envName(name)}_PKCS11_KEY_LABEL`]: custody.ETHEREUM_PKCS11_KEY_LABEL! }
        : { [`${envName(name)}_TREASURY_KEY`]: evmKey };
    const env = {
      CHAINS: [...DEFAULT_CHAINS, ...extraNames].join(','),
      ETHEREUM_ADAPTER: 'rpc',
      ETHEREUM_RPC_URL: ethereum.rpcUrl,
      ETHEREUM_USDC_ADDRESS: ethereum.usdcAddress,
      ETHEREUM_USDT_ADDRESS: ethereum.usdtAddress,
      ETHEREUM_PYUSD_ADDRESS: ethereum.pyusdAddress,
      // Its own chain id, which a service in production checks instead of mainnet's 1.
      ETHEREUM_CHAIN_ID: String(ethereum.chainId),
      ETHEREUM_CONFIRMATIONS: String(confirmations),
      SOLANA_ADAPTER: 'rpc',
      SOLANA_RPC_URL: solana.rpcUrl,
      SOLANA_USDC_MINT: solana.usdcMint,
      SOLANA_USDT_MINT: solana.usdtMint,
      SOLANA_PYUSD_MINT: solana.pyusdMint,
      ...custody,
      ...Object.assign({}, ...extraNames.map((name) => extraChainEnv(name, extras.get(name)!, evmCustody(name)))),
      ...batching,
      DATA_DIR: dataDir,
    };
    if (values.json) process.stdout.write(`${JSON.stringify(env)}\n`);
    else {
      process.stdout.write('Local chains are running. Point stableroute at them with:\n\n');
      for (const [key, value] of Object.entries(env)) process.stdout.write(`export ${key}=${value}\n`);
      process.stdout.write(
        `\nEthereum treasury ${treasuries.ethereum}` +
          (extraNames.length > 0 ? ` (also on ${extraNames.join(', ')})` : '') +
          `, Solana treasury ${treasuries.solana}` +
          (pkcs11 ? `, both keys inside the SoftHSM token "${custody.PKCS11_TOKEN_LABEL}" (never exported). ` : '. ') +
          `DATA_DIR is a new embedded database for this run (removed when the devnet stops, unless it is in use). Ctrl-C stops.\n`,
      );
    }
    await stop.requested;
    return 0;
  } catch (error) {
    if (stop.signal.aborted) return 0; // stopped during start-up, as asked
    throw error;
  } finally {
    await Promise.allSettled([ethereum?.stop(), solana?.stop(), ...[...extras.values()].map((extra) => extra.stop())]);
    await removeRunDir(runDir, dataDir, log);
    stop.dispose();
  }
}

/** The chains --chains names, checked as CHAINS checks names (src/config.ts); a problem is returned as its message. */
function extraChains(raw: string | undefined): string[] | string {
  if (raw === undefined) return [];
  const names = parseChainList(raw);
  if ('problem' in names) return `--chains ${names.problem}`;
  if (names.some((name) => DEFAULT_CHAINS.includes(name))) return `--chains: ${DEFAULT_CHAINS.join(' and ')} always run; name only the chains to add`;
  if (names.length > DEVNET_EXTRA_CHAINS_MAX) return `--chains names ${names.length} chains; at most ${DEVNET_EXTRA_CHAINS_MAX}`;
  return names;
}

/**
 * An extra chain's settings. Its chain id is the devnet's, not the preset's; a chain without a preset also gets what
 * a preset would give (src/config.ts requires it): fees in ETH, final by the `finalized` tag.
 */
function extraChainEnv(name: string, devnet: EthereumDevnet, custody: Record<string, string>): Record<string, string> {
  const prefix = envName(name);
  return {
    [`${prefix}_ADAPTER`]: 'rpc',
    [`${prefix}_RPC_URL`]: devnet.rpcUrl,
    [`${prefix}_USDC_ADDRESS`]: devnet.usdcAddress,
    [`${prefix}_USDT_ADDRESS`]: devnet.usdtAddress,
    [`${prefix}_PYUSD_ADDRESS`]: devnet.pyusdAddress,
    [`${prefix}_CHAIN_ID`]: String(devnet.chainId),
    ...(CHAIN_PRESETS[name] === undefined ? { [`${prefix}_NATIVE_CURRENCY`]: 'ETH', [`${prefix}_FINALITY`]: 'finalized' } : {}),
    ...custody,
  };
}

interface StopWatch {
  signal: AbortSignal;
  requested: Promise<void>;
  dispose(): void;
}

/**
 * SIGINT, SIGTERM, SIGHUP, or the parent's death (we are re-parented: `npx` killed by `kill $!` leaves us behind)
 * request a stop. The handlers stay installed until dispose(), so a second signal while stopping cannot kill the
 * process before anvil is down.
 */
function watchForStop(log: Logger): StopWatch {
  const controller = new AbortController();
  let resolve!: () => void;
  const requested = new Promise<void>((r) => (resolve = r));
  const request = (why: string) => {
    if (controller.signal.aborted) return;
    log.info({ why }, 'devnet stopping');
    controller.abort(new Error(`devnet stopped: ${why}`));
    resolve();
  };
  const handlers = STOP_SIGNALS.map((signal) => [signal, () => request(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  const parent = process.ppid;
  const parentWatch = setInterval(() => {
    if (process.ppid !== parent) request(`parent process ${parent} exited`);
  }, PARENT_POLL_MS);
  parentWatch.unref();
  return {
    signal: controller.signal,
    requested,
    dispose: () => {
      clearInterval(parentWatch);
      for (const [signal, handler] of handlers) process.removeListener(signal, handler);
    },
  };
}

/**
 * The run's DATA_DIR and token are worthless once its chains are gone; a PostgreSQL still running on DATA_DIR keeps
 * the whole run directory (its service may still sign with the token).
 */
async function removeRunDir(runDir: string, dataDir: string, log: Logger): Promise<void> {
  if (!existsSync(runDir)) return;
  if (existsSync(join(dataDir, 'pg', 'postmaster.pid'))) {
    log.warn({ dataDir }, 'DATA_DIR of this devnet run is in use by a running service; left in place');
    return;
  }
  await rm(runDir, { recursive: true, force: true });
}
