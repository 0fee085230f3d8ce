// The operator's path to real-chain mode, entirely from the outside: `stableroute devnet --json` prints the
// environment, `stableroute serve` started with exactly those variables pays out on both local chains, and ordinary
// JSON-RPC clients see each payout on chain to the micro-unit. Nothing here imports the devnet or the service's runtime.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { getBase58Decoder, getBase58Encoder, type Address as SolanaAddress } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import { createPublicClient, http, parseAbi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DEVNET_READY_MS, EXIT_MS, jsonLine, pay, readIntent, RPC_TIMEOUT_MS, SETTLE_MS, jsonRpc, startDevnet, withDeadline, type Devnet } from '../helpers/devnet-cli.js';
import { BIN, freePort, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const DEVNET_VARIABLES = [
  'ETHEREUM_ADAPTER', 'ETHEREUM_RPC_URL', 'ETHEREUM_USDC_ADDRESS', 'ETHEREUM_TREASURY_KEY',
  'SOLANA_ADAPTER', 'SOLANA_RPC_URL', 'SOLANA_USDC_MINT', 'SOLANA_TREASURY_KEY', 'DATA_DIR',
] as const;
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

let devnet: Devnet | undefined;
let devnetChildren: { pid: number; name: string }[] = [];
let service: ServiceProcess | undefined;
let db: TestDatabase | undefined;
/** The first run's variables: later runs must differ where a new chain makes the old ledger wrong. */
let firstEnv: Record<string, string> | undefined;
/** Every devnet process and anvil the tests saw, killed in afterAll if a failed test left one behind. */
const seen: { pid: number; name: string }[] = [];

/** SIGTERM first, so a devnet stops its own anvil; SIGKILL only if the process does not exit in time. */
async function stop(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_MS);
  await exited;
  clearTimeout(timer);
}

afterAll(async () => {
  if (service) await stop(service.child, service.exited);
  if (devnet) await stop(devnet.child, devnet.exited);
  for (const c of [...devnetChildren, ...seen]) if (isAlive(c)) process.kill(c.pid, 'SIGKILL');
  await db?.drop();
}, 60_000);

/** Direct children of `pid` (Linux /proc), so the test can prove anvil went away with its parent. */
function childPids(pid: number): { pid: number; name: string }[] {
  if (process.platform !== 'linux') return [];
  const children: { pid: number; name: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) children.push({ pid: Number(entry), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
    } catch {
      // the process ended while we were listing
    }
  }
  return children;
}

/** Still running, and still the same program (a pid can be reused once a process is gone). */
function isAlive(process_: { pid: number; name: string }): boolean {
  try {
    const stat = readFileSync(`/proc/${process_.pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2)[0];
    return stat.includes(`(${process_.name})`) && state !== 'Z';
  } catch {
    return false;
  }
}

type WithContext<T> = { context: { slot: number }; value: T };
type TokenAmount = { amount: string; decimals: number };
type SolanaTransaction = {
  meta: { err: unknown; fee: number; postTokenBalances: { owner: string; mint: string; uiTokenAmount: TokenAmount }[] };
};

describe('stableroute devnet --json + serve', () => {
  it('pays out on both local chains end to end, checked on chain, then everything stops cleanly', async () => {
    // 1. The devnet prints one JSON line of variables.
    devnet = startDevnet();
    const running = devnet;
    const ready = await waitFor(
      'devnet --json line',
      async () => {
        const out = running.stdout();
        if (out.includes('\n')) return { line: out.slice(0, out.indexOf('\n')) };
        return running.child.exitCode !== null && { line: undefined };
      },
      DEVNET_READY_MS,
    );
    expect(ready.line, `devnet exited early: ${running.stderr().slice(-2000)}`).toBeDefined();
    const line = ready.line!;
    devnetChildren = childPids(running.child.pid!);
    if (process.platform === 'linux') expect(devnetChildren.map((c) => c.name)).toContain('anvil');
    const env = JSON.parse(line) as Record<string, string>;
    firstEnv = env;
    for (const name of DEVNET_VARIABLES) expect(typeof env[name], name).toBe('string');
    expect(env.ETHEREUM_ADAPTER).toBe('rpc');
    expect(env.SOLANA_ADAPTER).toBe('rpc');
    expect(env.CHAINS).toBe('ethereum,solana');
    expect(env.ETHEREUM_CHAIN_ID, 'its own chain id, which a service in production checks instead of 1').toBe('31337');
    for (const value of Object.values(env)) expect(typeof value).toBe('string');

    // 2. Both endpoints answer standard JSON-RPC to ordinary clients.
    const ethRpc = env.ETHEREUM_RPC_URL!;
    const solRpc = env.SOLANA_RPC_URL!;
    const usdc = env.ETHEREUM_USDC_ADDRESS as Address;
    const mint = env.SOLANA_USDC_MINT! as SolanaAddress;
    const eth = createPublicClient({ transport: http(ethRpc, { timeout: RPC_TIMEOUT_MS, retryCount: 0 }) });
    const ethBalanceOf = (owner: Address) => eth.readContract({ address: usdc, abi: ERC20, functionName: 'balanceOf', args: [owner] });
    const ethTreasury = privateKeyToAccount(env.ETHEREUM_TREASURY_KEY as Hex).address;
    expect(await eth.getChainId()).toBe(31337);
    const ethTreasuryBefore = await ethBalanceOf(ethTreasury);
    expect(ethTreasuryBefore).toBeGreaterThan(0n);

    // A Solana secret key is seed (32 bytes) then public key (32 bytes).
    const solTreasury = getBase58Decoder().decode(getBase58Encoder().encode(env.SOLANA_TREASURY_KEY!).slice(32)) as SolanaAddress;
    const [solTreasuryAta] = await findAssociatedTokenPda({ owner: solTreasury, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const blockhash = await jsonRpc<WithContext<{ blockhash: string; lastValidBlockHeight: number }>>(solRpc, 'getLatestBlockhash', [{ commitment: 'finalized' }]);
    expect(blockhash.value.blockhash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(await jsonRpc<number>(solRpc, 'getSlot')).toBeGreaterThanOrEqual(0);
    expect((await jsonRpc<WithContext<number>>(solRpc, 'getBalance', [solTreasury])).value).toBeGreaterThan(0);
    const mintInfo = await jsonRpc<WithContext<{ owner: string; data: { parsed: { type: string; info: { decimals: number } } } }>>(
      solRpc, 'getAccountInfo', [mint, { encoding: 'jsonParsed' }],
    );
    expect(mintInfo.value.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(mintInfo.value.data.parsed).toMatchObject({ type: 'mint', info: { decimals: 6 } });
    const solTreasuryUsdc = () => jsonRpc<WithContext<TokenAmount>>(solRpc, 'getTokenAccountBalance', [solTreasuryAta]);
    const solTreasuryBefore = BigInt((await solTreasuryUsdc()).value.amount);
    expect(solTreasuryBefore).toBeGreaterThan(0n);

    // 3. serve with exactly the printed variables, plus a database and a port.
    db = await createTestDatabase();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = startService(['serve'], {
      ...env,
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      CONFIRMATION_POLL_SECONDS: '0.5',
      HEALTH_COLLECT_SECONDS: '1',
    });
    await waitHealthy(base, service);

    const solRecipient = getBase58Decoder().decode(randomBytes(32));
    const ethRecipient = privateKeyToAccount(generatePrivateKey()).address;
    const solId = await pay(base, 12.345678, { solana_address: solRecipient }, 'devnet-cli-sol');
    const ethId = await pay(base, 7.654321, { ethereum_address: ethRecipient }, 'devnet-cli-eth');
    const live = service;
    const FINAL = ['settled', 'failed', 'manual_review'];
    const [solIntent, ethIntent] = await waitFor(
      'both payouts final',
      async () => {
        const intents = await Promise.all([readIntent(base, solId), readIntent(base, ethId)]);
        return intents.every((i) => FINAL.includes(i.status)) && intents;
      },
      SETTLE_MS,
      250,
    );
    for (const intent of [solIntent, ethIntent]) expect(intent!.status, `${JSON.stringify(intent)}\n${live.output().slice(-3000)}`).toBe('settled');
    expect(solIntent!.selected_chain).toBe('solana');
    expect(ethIntent!.selected_chain).toBe('ethereum');

    // 4. On chain, to the micro-unit.
    const signature = solIntent!.attempts.find((a) => a.status === 'confirmed')?.tx_id;
    expect(signature, JSON.stringify(solIntent)).toBeTruthy();
    const tx = await jsonRpc<SolanaTransaction>(solRpc, 'getTransaction', [
      signature,
      { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 },
    ]);
    expect(tx.meta.err).toBeNull();
    expect(tx.meta.fee).toBeGreaterThan(0);
    const received = tx.meta.postTokenBalances.find((b) => b.owner === solRecipient);
    expect(received?.mint).toBe(mint);
    expect(received?.uiTokenAmount.amount).toBe('12345678');
    const [recipientAta] = await findAssociatedTokenPda({ owner: solRecipient as SolanaAddress, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    expect((await jsonRpc<WithContext<TokenAmount>>(solRpc, 'getTokenAccountBalance', [recipientAta])).value.amount).toBe('12345678');
    expect(BigInt((await solTreasuryUsdc()).value.amount)).toBe(solTreasuryBefore - 12_345_678n);
    expect(await ethBalanceOf(ethRecipient)).toBe(7_654_321n);
    expect(await ethBalanceOf(ethTreasury)).toBe(ethTreasuryBefore - 7_654_321n);

    // 5. The books agree with both chains.
    const reconciliationRes = await fetch(`${base}/admin/reconciliation`);
    expect(reconciliationRes.status).toBe(200);
    const reconciliation = (await reconciliationRes.json()) as { chain: string; status: string; difference_usdc: string }[];
    expect(reconciliation.map((r) => r.chain).sort()).toEqual(['ethereum', 'solana']);
    for (const row of reconciliation) {
      expect(row.status, JSON.stringify(row)).toBe('ok');
      expect(row.difference_usdc).toBe('0');
    }
    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: db.url });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);

    // 6. Both processes stop on SIGTERM with exit 0, and the devnet takes anvil with it.
    service.child.kill('SIGTERM');
    expect(await withDeadline(service.exited, EXIT_MS, 'serve exit after SIGTERM'), service.output().slice(-2000)).toBe(0);
    running.child.kill('SIGTERM');
    expect(await withDeadline(running.exited, EXIT_MS, 'devnet exit after SIGTERM'), running.stderr().slice(-2000)).toBe(0);
    expect(running.stdout().trim().split('\n')).toHaveLength(1);
    await expect(eth.getChainId()).rejects.toThrow();
    await expect(jsonRpc(solRpc, 'getSlot')).rejects.toThrow();
    const anvil = devnetChildren.find((c) => c.name === 'anvil');
    if (anvil) expect(isAlive(anvil), 'anvil outlived the devnet').toBe(false);
    // tsx's esbuild service leaves by itself once its parent's pipe closes.
    await waitFor('every devnet child gone', async () => devnetChildren.every((c) => !isAlive(c)), 5_000);
  }, 90_000);
});

async function anvilOf(pid: number): Promise<{ pid: number; name: string }> {
  const anvil = await waitFor('anvil started', async () => childPids(pid).find((c) => c.name === 'anvil'), DEVNET_READY_MS, 10);
  seen.push(anvil);
  return anvil;
}

describe.runIf(process.platform === 'linux')('the devnet never leaves anvil behind', () => {
  it('stops anvil when SIGTERM arrives during start-up, before any handler of the old code was installed', async () => {
    const early = startService(['devnet', '--json'], {});
    seen.push({ pid: early.child.pid!, name: 'node' });
    const anvil = await anvilOf(early.child.pid!);
    expect(early.output(), 'the devnet was already up: this test needs a kill during start-up').not.toContain('{');
    early.child.kill('SIGTERM');
    expect(await withDeadline(early.exited, EXIT_MS, 'devnet exit after an early SIGTERM'), early.output()).toBe(0);
    expect(isAlive(anvil), 'anvil outlived a devnet stopped during start-up').toBe(false);
  }, 60_000);

  it('stops on SIGHUP; a restarted devnet has a new ledger directory, and the kept database refuses its treasury', async () => {
    const run = startDevnet();
    seen.push({ pid: run.child.pid!, name: 'node' });
    const env = await jsonLine(run.stdout, run.child, run.stderr);
    const anvil = await anvilOf(run.child.pid!);
    expect(isAbsolute(env.DATA_DIR!)).toBe(true);
    expect(existsSync(env.DATA_DIR!)).toBe(false); // the service creates it
    if (firstEnv) {
      expect(env.DATA_DIR).not.toBe(firstEnv.DATA_DIR);
      // Fresh chains, kept database (DATABASE_URL wins over DATA_DIR): refused at start-up with the way out.
      expect(env.SOLANA_TREASURY_KEY).not.toBe(firstEnv.SOLANA_TREASURY_KEY);
      if (db) {
        const refused = await runCommand(['serve'], { ...env, DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1' });
        expect(refused.code, refused.stdout + refused.stderr).toBe(1);
        expect(refused.stderr).toContain('the solana treasury changed');
        expect(refused.stderr).toContain('DATA_DIR');
      }
    }
    mkdirSync(env.DATA_DIR!, { recursive: true });
    writeFileSync(join(env.DATA_DIR!, 'left-by-a-stopped-service'), '');

    run.child.kill('SIGHUP');
    expect(await withDeadline(run.exited, EXIT_MS, 'devnet exit after SIGHUP'), run.stderr().slice(-2000)).toBe(0);
    expect(isAlive(anvil), 'anvil outlived the devnet').toBe(false);
    await expect(jsonRpc(env.SOLANA_RPC_URL!, 'getSlot')).rejects.toThrow();
    expect(existsSync(env.DATA_DIR!), 'an unused DATA_DIR of the run is removed').toBe(false);
  }, 60_000);

  it('stops when its parent dies, as `kill $!` on `npx stableroute devnet --json &` leaves it', async () => {
    // npx runs the command under `sh -c`; killing npx kills that shell and re-parents the devnet.
    let stdout = '';
    const shell = spawn('sh', ['-c', `"${process.execPath}" "${BIN}" devnet --json & wait`], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    shell.stdout!.on('data', (chunk) => (stdout += chunk));
    const node = await waitFor('devnet under the shell', async () => childPids(shell.pid!).find((c) => c.name !== 'sh'), DEVNET_READY_MS, 10);
    seen.push(node);
    const env = await jsonLine(() => stdout, shell, () => stdout);
    const anvil = await anvilOf(node.pid);
    // A service still running on this run's database keeps it.
    mkdirSync(join(env.DATA_DIR!, 'pg'), { recursive: true });
    writeFileSync(join(env.DATA_DIR!, 'pg', 'postmaster.pid'), '1\n');

    shell.kill('SIGKILL');
    await waitFor('devnet and anvil gone with their parent', async () => !isAlive(node) && !isAlive(anvil), EXIT_MS);
    expect(existsSync(env.DATA_DIR!), 'a DATA_DIR in use is left in place').toBe(true);
    rmSync(dirname(env.DATA_DIR!), { recursive: true, force: true }); // the run directory it sits in
  }, 60_000);
});

describe('stableroute devnet --chains', () => {
  it('refuses a chain name CHAINS would refuse, ethereum or solana, or a repeat, before starting anything', async () => {
    const runs = await Promise.all(['Base', 'base,solana', 'base,base'].map((chains) => runCommand(['devnet', '--chains', chains, '--json'], {})));
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain('--chains');
      expect(run.stdout).toBe('');
    }
  });

  it('--chains base: one more anvil of a local chain id, its settings printed with CHAINS; devnet fund --chain base lands there', async () => {
    const run = startDevnet(['--chains', 'base']);
    seen.push({ pid: run.child.pid!, name: 'node' });
    const env = await jsonLine(run.stdout, run.child, run.stderr);
    const anvils = childPids(run.child.pid!).filter((c) => c.name === 'anvil');
    seen.push(...anvils);
    if (process.platform === 'linux') expect(anvils).toHaveLength(2);
    expect(env).toMatchObject({ CHAINS: 'ethereum,solana,base', BASE_ADAPTER: 'rpc', BASE_CHAIN_ID: '31338', BASE_TREASURY_KEY: env.ETHEREUM_TREASURY_KEY });
    expect(env.BASE_RPC_URL).not.toBe(env.ETHEREUM_RPC_URL);
    const baseNode = createPublicClient({ transport: http(env.BASE_RPC_URL!, { timeout: RPC_TIMEOUT_MS, retryCount: 0 }) });
    const ethNode = createPublicClient({ transport: http(env.ETHEREUM_RPC_URL!, { timeout: RPC_TIMEOUT_MS, retryCount: 0 }) });
    expect(await baseNode.getChainId()).toBe(31338);
    expect(await ethNode.getChainId()).toBe(31337);
    const treasury = privateKeyToAccount(env.BASE_TREASURY_KEY as Hex).address;
    const usdcOf = (node: typeof baseNode, owner: Address) =>
      node.readContract({ address: env.BASE_USDC_ADDRESS as Address, abi: ERC20, functionName: 'balanceOf', args: [owner] });
    expect(await usdcOf(baseNode, treasury)).toBeGreaterThan(0n);

    const recipient = privateKeyToAccount(generatePrivateKey()).address;
    const funded = await runCommand(['devnet', 'fund', '--chain', 'base', '--to', recipient, '--usdc', '2.5', '--native', '0.5', '--json'], env);
    expect(funded.code, funded.stderr).toBe(0);
    expect(JSON.parse(funded.stdout)).toMatchObject({ chain: 'base' });
    expect(await usdcOf(baseNode, recipient)).toBe(2_500_000n);
    expect(await baseNode.getBalance({ address: recipient })).toBe(5n * 10n ** 17n);
    expect(await ethNode.getBalance({ address: recipient })).toBe(0n);

    // USDT and PYUSD (issue 40): each chain prints its own, and devnet fund mints them, on an EVM chain and on Solana.
    const tokenOf = (token: string, owner: Address) =>
      baseNode.readContract({ address: env[`BASE_${token}_ADDRESS`] as Address, abi: ERC20, functionName: 'balanceOf', args: [owner] });
    for (const name of ['ETHEREUM_USDT_ADDRESS', 'ETHEREUM_PYUSD_ADDRESS', 'BASE_USDT_ADDRESS', 'BASE_PYUSD_ADDRESS']) expect(env[name], name).toMatch(/^0x[0-9a-fA-F]{40}$/);
    for (const name of ['SOLANA_USDT_MINT', 'SOLANA_PYUSD_MINT']) expect(env[name], name).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    expect(await tokenOf('USDT', treasury)).toBe(1_000_000_000_000n);
    const tokens = await runCommand(['devnet', 'fund', '--chain', 'base', '--to', recipient, '--usdt', '1.25', '--pyusd', '0.5', '--json'], env);
    expect(tokens.code, tokens.stderr).toBe(0);
    expect(JSON.parse(tokens.stdout).tx_ids).toHaveLength(3); // USDT issued then sent, PYUSD minted
    expect([await tokenOf('USDT', recipient), await tokenOf('PYUSD', recipient)]).toEqual([1_250_000n, 500_000n]);
    const unset = await runCommand(['devnet', 'fund', '--chain', 'base', '--to', recipient, '--usdt', '1'], { ...env, BASE_USDT_ADDRESS: '' });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toContain('BASE_USDT_ADDRESS');
    const solanaRecipient = getBase58Decoder().decode(randomBytes(32)) as SolanaAddress;
    const solanaTokens = await runCommand(['devnet', 'fund', '--chain', 'solana', '--to', solanaRecipient, '--usdt', '2', '--pyusd', '3.000001', '--json'], env);
    expect(solanaTokens.code, solanaTokens.stderr).toBe(0);
    const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb' as SolanaAddress;
    const [usdtAta] = await findAssociatedTokenPda({ owner: solanaRecipient, mint: env.SOLANA_USDT_MINT as SolanaAddress, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const [pyusdAta] = await findAssociatedTokenPda({ owner: solanaRecipient, mint: env.SOLANA_PYUSD_MINT as SolanaAddress, tokenProgram: TOKEN_2022 });
    const amountOf = async (ata: string) => (await jsonRpc<WithContext<TokenAmount>>(env.SOLANA_RPC_URL!, 'getTokenAccountBalance', [ata])).value.amount;
    expect([await amountOf(usdtAta), await amountOf(pyusdAta)]).toEqual(['2000000', '3000001']);

    run.child.kill('SIGTERM');
    expect(await withDeadline(run.exited, EXIT_MS, 'devnet exit after SIGTERM'), run.stderr().slice(-2000)).toBe(0);
    await expect(baseNode.getChainId()).rejects.toThrow();
    for (const anvil of anvils) expect(isAlive(anvil), 'an anvil outlived the devnet').toBe(false);
  }, 60_000);
});
