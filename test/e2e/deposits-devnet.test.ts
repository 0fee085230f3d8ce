// Deposits and returned payouts on the local real chains (anvil, the LiteSVM devnet), through `stableroute devnet
// fund` and the adapters' listInboundTransfers: a deposit raises available once it is final; a deposit and a return
// in one block are both booked right (the return as the payment's one refund and event); a crash between booking and
// moving the scan position books once; `ledger verify` and `reconcile` stay clean.
import pino from 'pino';
import { createPublicClient, http, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scanChain, scanDeposits } from '../../src/core/treasury/deposits/scan.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { mineBlocks, setAutomine, startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { sendDevnetEthereumTransfer } from '../../src/devnet/ethereum-transfer.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { sendDevnetSolanaTransfers } from '../../src/devnet/solana-transfer.js';
import type { Chain } from '../../src/domain/chain.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { runCommand } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';
import { devnetEnv } from '../helpers/devnet.js';

const ETH_RECIPIENT = '0x52908400098527886E0F7030069857D2E4169EE7' as Address;
const SOL_RECIPIENT = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const quiet = pino({ level: 'silent' });

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let t: TestContext;

beforeAll(async () => {
  [eth, sol] = await Promise.all([startEthereumDevnet(), startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: 8 })]);
  // Slots move only when a test moves them: "final" and "one slot" are then exact.
  sol.pause();
  t = await createTestContext(devnetEnv(eth, sol));
}, 120_000);
afterAll(async () => {
  await t?.close();
  await Promise.all([eth?.stop(), sol?.stop()]);
});

const fundEnv = () => ({ ETHEREUM_RPC_URL: eth.rpcUrl, ETHEREUM_USDC_ADDRESS: eth.usdcAddress, SOLANA_RPC_URL: sol.rpcUrl });
const scan = () => scanDeposits({ ...t.ctx, log: quiet });

async function available(chain: Chain): Promise<number> {
  const overview = await t.app.inject({ method: 'GET', url: '/admin/overview' });
  return overview.json().treasury_balances.find((b: { chain: string }) => b.chain === chain).available_balance as number;
}

async function inbound(chain: Chain): Promise<{ tx_id: string; currency: string; amount: string; status: string }[]> {
  const { rows } = await t.db.pool.query('SELECT tx_id, currency, amount::text, match_status AS status FROM inbound_transfers WHERE chain = $1 ORDER BY id', [chain]);
  return rows;
}

async function expectCleanBooks(): Promise<void> {
  expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  for (const r of await reconcile(t.db.pool, t.ctx.adapters)) expect(r.status, JSON.stringify(r)).toBe('ok');
}

async function settle(id: string, moveChain: () => Promise<void> | void): Promise<void> {
  for (let i = 0; i < 50; i++) {
    await moveChain();
    await confirm(t);
    const { rows } = await t.db.pool.query('SELECT status FROM payment_intents WHERE id = $1', [id]);
    if (rows[0].status === 'settled') return;
  }
  throw new Error(`${id} did not settle`);
}

async function refundsOf(id: string): Promise<{ entries: number[]; events: number }> {
  const read = await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY });
  expect(read.json().status).toBe('settled');
  const entries = read.json().ledger_entries.filter((e: { type: string }) => e.type === 'refund').map((e: { amount: number }) => e.amount);
  const events = await t.db.pool.query("SELECT 1 FROM webhook_events WHERE payment_intent_id = $1 AND event_type = 'payment.refunded'", [id]);
  return { entries, events: events.rowCount ?? 0 };
}

describe('deposits on the Ethereum devnet', () => {
  it('devnet fund: a deposit is booked once it is ETHEREUM_CONFIRMATIONS deep, once', { timeout: 120_000 }, async () => {
    const treasury = t.ctx.adapters.ethereum!.treasuryAddress();
    const before = await available('ethereum');
    expect((await runCommand(['devnet', 'fund', '--chain', 'ethereum', '--usdc', '1'], fundEnv())).code).toBe(2);
    expect((await runCommand(['devnet', 'fund', '--chain', 'ethereum', '--to', treasury], fundEnv())).code).toBe(2);
    expect((await runCommand(['devnet', 'fund', '--chain', 'ethereum', '--to', treasury, '--usdc', '1'], {})).code).toBe(1);
    const funded = await runCommand(['devnet', 'fund', '--chain', 'ethereum', '--to', treasury, '--usdc', '100', '--native', '1', '--json'], fundEnv());
    expect(funded.code, funded.stderr).toBe(0);
    const txIds = JSON.parse(funded.stdout.trim()).tx_ids as string[];
    expect(txIds).toHaveLength(2);
    // Automine: the mint is 2 blocks deep (final), the ETH transfer mined after it only 1 (not yet).
    expect((await scan()).booked).toBe(1);
    expect((await inbound('ethereum')).map((r) => r.currency)).toEqual(['USDC']);
    await mineBlocks(eth.rpcUrl, 1);
    expect((await scan()).booked).toBe(1);
    expect((await scan()).booked).toBe(0);
    expect(await available('ethereum')).toBe(before + 100);
    expect((await inbound('ethereum')).map((r) => [r.currency, r.amount])).toEqual([
      ['USDC', '100000000'],
      ['ETH', '1000000000000000000'],
    ]);
    await expectCleanBooks();
  });

  it('books a deposit and a return arriving in one block; the return is the payment\'s one refund', { timeout: 120_000 }, async () => {
    const treasury = t.ctx.adapters.ethereum!.treasuryAddress() as Address;
    const id = await createPayment(t.app, 5, { ethereum_address: ETH_RECIPIENT });
    await drainExecution(t);
    await settle(id, () => mineBlocks(eth.rpcUrl, 1));
    await scan();
    const before = await available('ethereum');

    await setAutomine(eth.rpcUrl, false);
    let hashes: string[];
    try {
      const chain = { rpcUrl: eth.rpcUrl, usdcAddress: eth.usdcAddress };
      hashes = [
        ...(await sendDevnetEthereumTransfer(chain, { to: treasury, usdcMicros: 50_000_000n, wei: 0n }, { wait: false })),
        ...(await sendDevnetEthereumTransfer(chain, { to: treasury, from: ETH_RECIPIENT, usdcMicros: 5_000_000n, wei: 0n }, { wait: false })),
      ];
      await mineBlocks(eth.rpcUrl, 1);
    } finally {
      await setAutomine(eth.rpcUrl, true);
    }
    const client = createPublicClient({ transport: http(eth.rpcUrl) });
    const blocks = await Promise.all(hashes.map(async (hash) => (await client.getTransactionReceipt({ hash: hash as `0x${string}` })).blockNumber));
    expect(new Set(blocks).size).toBe(1);
    await mineBlocks(eth.rpcUrl, 2);

    // A crash after booking, before the position moves: the restarted scan books nothing twice.
    const crash = new Error('crash');
    await expect(scanChain({ ...t.ctx, log: quiet }, 'ethereum', { afterBooking: () => Promise.reject(crash) })).rejects.toBe(crash);
    expect((await scan()).booked).toBe(0);

    expect(await available('ethereum')).toBe(before + 55);
    expect(await refundsOf(id)).toEqual({ entries: [5], events: 1 });
    const rows = await inbound('ethereum');
    expect(rows.filter((r) => hashes.includes(r.tx_id)).map((r) => r.status).sort()).toEqual(['funding', 'matched']);

    // Attaching the same return by CLI afterwards is refused: booked once.
    const returnTx = hashes[1]!;
    const attach = await runCommand(['intents', 'refund', id, '--tx', returnTx], { DATABASE_URL: t.db.url });
    expect(attach.code).toBe(1);
    expect(await refundsOf(id)).toEqual({ entries: [5], events: 1 });
    await expectCleanBooks();
  });
});

describe('deposits on the Solana devnet', () => {
  it('devnet fund: a deposit is booked once finalized, once', { timeout: 120_000 }, async () => {
    const treasury = t.ctx.adapters.solana!.treasuryAddress();
    const before = await available('solana');
    const funded = await runCommand(['devnet', 'fund', '--chain', 'solana', '--to', treasury, '--usdc', '100', '--native', '1', '--json'], fundEnv());
    expect(funded.code, funded.stderr).toBe(0);
    await scan();
    expect(await inbound('solana')).toEqual([]);
    sol.advanceSlots(8);
    expect((await scan()).booked).toBe(2);
    expect((await scan()).booked).toBe(0);
    expect(await available('solana')).toBe(before + 100);
    expect((await inbound('solana')).map((r) => [r.currency, r.amount])).toEqual([
      ['USDC', '100000000'],
      ['SOL', '1000000000'],
    ]);
    await expectCleanBooks();
  });

  it('books a deposit and a return in one slot; the return is the payment\'s one refund', { timeout: 120_000 }, async () => {
    const treasury = t.ctx.adapters.solana!.treasuryAddress();
    const id = await createPayment(t.app, 5, { solana_address: SOL_RECIPIENT });
    await drainExecution(t);
    await settle(id, () => sol.advanceSlots(4));
    await scan();
    const before = await available('solana');

    const sent = await sendDevnetSolanaTransfers(sol.rpcUrl, [
      { to: treasury, usdcMicros: 50_000_000n, lamports: 0n },
      { to: treasury, from: SOL_RECIPIENT, usdcMicros: 5_000_000n, lamports: 0n },
    ]);
    expect(sent.signatures).toHaveLength(2);
    sol.advanceSlots(8);

    const crash = new Error('crash');
    await expect(scanChain({ ...t.ctx, log: quiet }, 'solana', { afterBooking: () => Promise.reject(crash) })).rejects.toBe(crash);
    expect((await scan()).booked).toBe(0);

    expect(await available('solana')).toBe(before + 55);
    expect(await refundsOf(id)).toEqual({ entries: [5], events: 1 });
    const rows = await inbound('solana');
    expect(rows.filter((r) => sent.signatures.includes(r.tx_id)).map((r) => r.status).sort()).toEqual(['funding', 'matched']);

    // The recipient, given 1 USDC elsewhere, sends it too through the CLI: no second refund; booked as funding and
    // listed for the operator.
    const topUp = await runCommand(['devnet', 'fund', '--chain', 'solana', '--to', SOL_RECIPIENT, '--usdc', '1'], fundEnv());
    expect(topUp.code, topUp.stderr).toBe(0);
    const more = await runCommand(['devnet', 'fund', '--chain', 'solana', '--from', SOL_RECIPIENT, '--to', treasury, '--usdc', '1', '--json'], fundEnv());
    expect(more.code, more.stderr).toBe(0);
    const [moreTx] = JSON.parse(more.stdout.trim()).tx_ids as string[];
    sol.advanceSlots(8);
    expect((await scan()).booked).toBe(1);
    const unmatched = (await t.app.inject({ method: 'GET', url: '/admin/deposits?status=unmatched&chain=solana' })).json().data;
    expect(unmatched).toEqual([expect.objectContaining({ tx_id: moreTx, from_address: SOL_RECIPIENT, amount: '1' })]);
    expect(await refundsOf(id)).toEqual({ entries: [5], events: 1 });
    await expectCleanBooks();
  });
});
