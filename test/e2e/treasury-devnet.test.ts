// Gas booking and withdrawals on the local real chains (anvil, the LiteSVM Solana devnet), rpc adapters throughout:
// the treasury's opening native balance is booked at start-up, every fee is booked at what the chain charged, so the
// books and the wallet agree on the gas left; a withdrawal (CLI on Ethereum, admin API on Solana) lands on chain to
// the micro-unit, once, and `reconcile` and `ledger verify` stay clean. Bad CLI input exits non-zero, changing nothing.
// Gas below the low-water mark degrades the chain and raises an alert until SOL sent with `devnet fund` is booked.
import { createPublicClient, http, parseAbi, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { mineBlocks, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import type { Chain } from '../../src/domain/chain.js';
import { treasuryNativeBalances } from '../../src/ledger/native-balances.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { scanDeposits } from '../../src/core/treasury/deposits/scan.js';
import { recordHealthSnapshots } from '../../src/core/health/health-snapshots.js';
import pino from 'pino';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { runCommand, waitFor } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { devnetEnv } from '../helpers/devnet.js';
import { jsonRpc } from '../helpers/devnet-cli.js';

const ETH_RECIPIENT = '0x52908400098527886E0F7030069857D2E4169EE7' as Address;
const SOL_RECIPIENT = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let t: TestContext;
let env: Record<string, string>;

beforeAll(async () => {
  [eth, sol] = await Promise.all([startEthereumDevnet(), startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: 8 })]);
  const chains = devnetEnv(eth, sol);
  // The Solana devnet's treasury opens with 100 SOL: below a low-water mark of 100.5.
  t = await createTestContext({ ...chains, RPC_TIMEOUT_SECONDS: '5', EXECUTION_RETRY_DELAY_SECONDS: '1', SOLANA_GAS_LOW_WATER: '100.5' });
  env = { ...chains, DATABASE_URL: t.db.url };
}, 120_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([eth?.stop(), sol?.stop()]);
});

const ethUsdc = () =>
  createPublicClient({ transport: http(eth.rpcUrl) }).readContract({ address: eth.usdcAddress, abi: ERC20, functionName: 'balanceOf', args: [ETH_RECIPIENT] });
const booked = async (chain: Chain) => (await treasuryNativeBalances(t.db.pool)).find((b) => b.chain === chain)!.units;
const withdrawal = async (id: string) => (await t.app.inject({ method: 'GET', url: `/admin/withdrawals/${id}` })).json();
const available = async (chain: Chain) =>
  ((await t.app.inject({ method: 'GET', url: '/admin/treasury' })).json() as { chain: string; available_usdc: string }[]).find((c) => c.chain === chain)!
    .available_usdc;

async function settle(id: string, moveChain: () => unknown): Promise<{ status: string; tx_id: string }> {
  await drainExecution(t);
  for (let i = 0; i < 60; i++) {
    await moveChain();
    await confirm(t);
    const w = await withdrawal(id);
    if (w.status === 'settled' || w.status === 'failed') return w;
  }
  throw new Error(`${id} did not settle`);
}

describe('gas and withdrawals on the devnet', () => {
  it('books the opening native balance of rpc treasuries', async () => {
    for (const chain of ['ethereum', 'solana'] as const) {
      const onChain = await t.ctx.adapters[chain]!.treasuryNativeBalance();
      expect(onChain).toBeGreaterThan(0n);
      expect(await booked(chain)).toBe(onChain);
    }
  });

  it('stableroute treasury withdraw on Ethereum: accepted (exit 0, the id), lands once; fee booked at what the chain charged', async () => {
    const before = await ethUsdc();
    const availableBefore = await available('ethereum');
    const run = await runCommand(['treasury', 'withdraw', '--chain', 'ethereum', '--to', ETH_RECIPIENT, '--usdc', '3.250001', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const accepted = JSON.parse(run.stdout) as { id: string; status: string; amount_usdc: string };
    expect(accepted).toMatchObject({ status: 'route_selected', amount_usdc: '3.250001' });
    const plain = await runCommand(['treasury', 'withdraw', '--chain', 'ethereum', '--to', ETH_RECIPIENT, '--usdc', '1', '--idempotency-key', 'plain'], env);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout.trim()).toMatch(/^pi_[0-9a-z]+$/);

    for (const id of [accepted.id, plain.stdout.trim()]) expect((await settle(id, () => mineBlocks(eth.rpcUrl, 1))).status).toBe('settled');
    expect((await ethUsdc()) - before).toBe(4_250_001n);
    expect(Number(await available('ethereum'))).toBeCloseTo(Number(availableBefore) - 4.250001, 6);
    expect(await booked('ethereum')).toBe(await t.ctx.adapters.ethereum!.treasuryNativeBalance());
    expect((await t.db.pool.query('SELECT 1 FROM payment_attempts WHERE payment_intent_id = $1', [accepted.id])).rowCount).toBe(1);
  });

  it('POST /admin/withdrawals on Solana: lands once; the books and the wallet agree on USDC and SOL', async () => {
    const created = await t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload: { chain: 'solana', to: SOL_RECIPIENT, amount_usdc: '7.654321' } });
    expect(created.statusCode, created.body).toBe(201);
    const w = await settle(created.json().id, () => sol.advanceSlots(4));
    expect(w.status).toBe('settled');
    const tx = await jsonRpc<{ meta: { err: unknown; postTokenBalances: { owner: string; uiTokenAmount: { amount: string } }[] } }>(
      sol.rpcUrl,
      'getTransaction',
      [w.tx_id, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }],
    );
    expect(tx.meta.err).toBeNull();
    expect(tx.meta.postTokenBalances.find((b) => b.owner === SOL_RECIPIENT)?.uiTokenAmount.amount).toBe('7654321');
    expect(await booked('solana')).toBe(await t.ctx.adapters.solana!.treasuryNativeBalance());
    expect((await reconcile(t.db.pool, t.ctx.adapters)).map((r) => r.status)).toEqual(['ok', 'ok']);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('refuses bad CLI input with a message and a non-zero exit, changing nothing', async () => {
    const count = async () => (await t.db.pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM ledger_transactions')).rows[0]!.n;
    const before = await count();
    const withdraw = (...args: string[]) => runCommand(['treasury', 'withdraw', ...args], env);
    const runs = await Promise.all([
      withdraw('--chain', 'bitcoin', '--to', ETH_RECIPIENT, '--usdc', '1'),
      withdraw('--chain', 'ethereum', '--to', 'not-an-address', '--usdc', '1'),
      withdraw('--chain', 'ethereum', '--to', ETH_RECIPIENT, '--usdc', '0'),
      withdraw('--chain', 'ethereum', '--to', ETH_RECIPIENT, '--usdc', '1.0000001'),
      withdraw('--chain', 'ethereum', '--to', ETH_RECIPIENT, '--usdc', '999999999'),
      withdraw('--chain', 'ethereum', '--usdc', '1'),
    ]);
    expect(runs.map((r) => r.code)).toEqual([1, 1, 1, 1, 1, 2]);
    expect(runs.slice(0, 5).map((r) => r.stderr.split(':')[0])).toEqual(['INVALID_CHAIN', 'INVALID_DESTINATION', 'INVALID_AMOUNT', 'INVALID_AMOUNT', 'INSUFFICIENT_BALANCE']);
    expect(runs[5]!.stderr).toContain('usage: stableroute treasury withdraw');
    expect(await count()).toBe(before);
  });

  it('gas below the mark degrades Solana and raises an alert; SOL sent with devnet fund is booked and resolves it', async () => {
    const quiet = pino({ level: 'silent' });
    const collect = async () => {
      t.clock.advance(15_000);
      await recordHealthSnapshots({ ...t.ctx, log: quiet });
    };
    const solanaHealth = async () =>
      ((await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().chain_health as { chain: string; health_status: string; status_reason: string | null }[]).find(
        (s) => s.chain === 'solana',
      )!;
    const openAlerts = async () => ((await t.app.inject({ method: 'GET', url: '/admin/alerts?status=open' })).json().data as { kind: string; chain: string }[]);

    await collect();
    expect((await solanaHealth()).status_reason).toMatch(/^low_gas: the solana treasury has 99\.\d+ SOL for fees, below the low-water mark of 100\.5 SOL$/);
    expect(await openAlerts()).toEqual([expect.objectContaining({ kind: 'low_gas', chain: 'solana' })]);

    const treasury = t.ctx.adapters.solana!.treasuryAddress();
    const funded = await runCommand(['devnet', 'fund', '--chain', 'solana', '--to', treasury, '--native', '2'], {
      ETHEREUM_RPC_URL: eth.rpcUrl,
      ETHEREUM_USDC_ADDRESS: eth.usdcAddress,
      SOLANA_RPC_URL: sol.rpcUrl,
    });
    expect(funded.code, funded.stderr).toBe(0);
    // The deposit scanner books the SOL once it is finalized (slots keep ticking on this devnet).
    await waitFor('the SOL deposit booked', async () => {
      await scanDeposits({ ...t.ctx, log: quiet });
      return (await booked('solana')) > 100_500_000_000n;
    });
    expect(await booked('solana')).toBe(await t.ctx.adapters.solana!.treasuryNativeBalance());
    await collect();
    expect((await solanaHealth()).status_reason).toBeNull();
    expect(await openAlerts()).toEqual([]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});
