// Issue 28's payroll, as a new user runs it: `stableroute devnet --json` prints the environment, `stableroute serve`
// starts with exactly those variables, and one POST /payout_batches pays 1,000 people, half on each chain, one of
// them an Ethereum address the token's blacklister froze. A handful of transactions pays them all; each payment
// settles with its own share of its transaction's fee, the shares adding up to what the chain charged; the frozen
// recipient fails alone; the batch completes; `stableroute ledger verify` and `stableroute reconcile` are clean.
import { randomBytes } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import pg from 'pg';
import { createPublicClient, getAddress, http, parseAbi, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blacklistEthereumAddress } from '../../src/devnet/ethereum-blacklist.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { DEVNET_READY_MS, EXIT_MS, jsonLine, KEY, startDevnet, withDeadline, type Devnet } from '../helpers/devnet-cli.js';
import { freePort, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const PAYMENTS = 1000;
const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
/** Every payment of the payroll final: anvil's 1 s blocks and LiteSVM's slots, with room for a slow machine. */
const PAYROLL_MS = 180_000;

let devnet: Devnet | undefined;
let service: ServiceProcess | undefined;
let db: TestDatabase | undefined;
let env: Record<string, string>;
let base: string;

beforeAll(async () => {
  devnet = startDevnet();
  env = await withDeadline(jsonLine(devnet.stdout, devnet.child, devnet.stderr), DEVNET_READY_MS, 'devnet start');
  db = await createTestDatabase();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  service = startService(['serve'], { ...env, DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', CONFIRMATION_POLL_SECONDS: '0.5' });
  await waitHealthy(base, service);
}, 120_000);

afterAll(async () => {
  for (const child of [service, devnet]) {
    if (!child || child.child.exitCode !== null || child.child.signalCode !== null) continue;
    child.child.kill('SIGTERM');
    const timer = setTimeout(() => child.child.kill('SIGKILL'), EXIT_MS);
    await child.exited;
    clearTimeout(timer);
  }
  await db?.drop();
}, 60_000);

describe('a payroll of 1,000 through the bulk API on the devnet', () => {
  it('goes out in a handful of transactions; each payment settles with its share of the fee; a frozen recipient fails alone', { timeout: PAYROLL_MS + 60_000 }, async () => {
    expect(env.ETHEREUM_BATCH_CONTRACT, 'stableroute devnet prints the batch contract it approved').toMatch(/^0x[0-9a-fA-F]{40}$/);
    const frozen = getAddress(`0x${randomBytes(20).toString('hex')}`);
    await blacklistEthereumAddress({ rpcUrl: env.ETHEREUM_RPC_URL!, usdcAddress: env.ETHEREUM_USDC_ADDRESS! as Address }, frozen);
    const destinations = Array.from({ length: PAYMENTS }, (_, i) =>
      i === 0
        ? { ethereum_address: frozen }
        : i % 2 === 0
          ? { ethereum_address: getAddress(`0x${randomBytes(20).toString('hex')}`) }
          : { solana_address: getBase58Decoder().decode(randomBytes(32)) },
    );
    const items = destinations.map((destination, i) => ({ idempotency_key: `payroll-${i}`, amount_usd: (100 + (i % 50)) / 100, priority: 'fast', destination }));
    const res = await fetch(`${base}/payout_batches`, { method: 'POST', headers: KEY, body: JSON.stringify({ idempotency_key: 'payroll-november', items }) });
    const created = (await res.json()) as { id: string; counts: Record<string, number>; items: { payment_intent?: { payment_intent_id: string } }[] };
    expect(res.status, JSON.stringify(created).slice(0, 500)).toBe(201);
    expect(created.counts).toEqual({ created: PAYMENTS, replayed: 0, refused: 0 });
    const frozenId = created.items[0]!.payment_intent!.payment_intent_id;

    type Summary = { status: string; payments_by_status: Record<string, number>; totals: { requested_usd: number; settled_usd: number; failed_usd: number } };
    const done = await waitFor(
      'every payment of the payroll final',
      async () => {
        const summary = (await (await fetch(`${base}/payout_batches/${created.id}`, { headers: KEY })).json()) as Summary;
        return summary.status === 'completed' ? summary : null;
      },
      PAYROLL_MS,
      500,
    );
    expect(done.payments_by_status).toEqual({ settled: PAYMENTS - 1, failed: 1 });
    const frozenIntent = (await (await fetch(`${base}/payment_intents/${frozenId}`, { headers: KEY })).json()) as { status: string; failure_reason?: string };
    expect(frozenIntent.status).toBe('failed');

    // A handful of transactions, each payment with its own attempt sharing its transaction's id.
    const pool = new pg.Pool({ connectionString: db!.url, max: 1 });
    try {
      const { rows } = await pool.query<{ chain: string; tx_id: string; tx_payments: number; fee: string; payment_intent_id: string }>(
        "SELECT chain, tx_id, tx_payments, actual_fee_native::text AS fee, payment_intent_id FROM payment_attempts WHERE status = 'confirmed'",
      );
      expect(rows).toHaveLength(PAYMENTS - 1);
      expect(rows.map((r) => r.payment_intent_id)).not.toContain(frozenId);
      const transactions = (chain: string) => [...new Set(rows.filter((r) => r.chain === chain).map((r) => r.tx_id))];
      const ethereumTxs = transactions('ethereum');
      // 499 Ethereum payments in at most a few batches of EVM_BATCH_TRANSFERS_MAX; Solana packs at most 16 a transaction,
      // 9 when each payout also creates its recipient's token account.
      expect(ethereumTxs.length).toBeLessThanOrEqual(20);
      expect(transactions('solana').length).toBeLessThanOrEqual(Math.ceil(500 / 8));

      // Each Ethereum transaction's fee, as the chain charged it, booked in shares that add up to it exactly.
      const client = createPublicClient({ transport: http(env.ETHEREUM_RPC_URL) });
      for (const txId of ethereumTxs) {
        const receipt = await client.getTransactionReceipt({ hash: txId as Hex });
        const shares = rows.filter((r) => r.tx_id === txId);
        expect(shares.every((s) => s.tx_payments === shares.length)).toBe(true);
        expect(shares.reduce((sum, s) => sum + BigInt(s.fee), 0n)).toBe(receipt.gasUsed * receipt.effectiveGasPrice);
      }
      const balance = (owner: Address) => client.readContract({ address: env.ETHEREUM_USDC_ADDRESS! as Address, abi: ERC20, functionName: 'balanceOf', args: [owner] });
      expect(await balance(frozen)).toBe(0n);
      const paidEthereum = destinations.flatMap((d, i) => ('ethereum_address' in d && i !== 0 ? [{ to: d.ethereum_address as Address, i }] : []));
      for (const { to, i } of paidEthereum.slice(0, 20)) expect(await balance(to)).toBe(1_000_000n + BigInt(i % 50) * 10_000n);
    } finally {
      await pool.end();
    }

    const cli = { ...env, DATABASE_URL: db!.url };
    const verify = await runCommand(['ledger', 'verify'], cli);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const reconcile = await runCommand(['reconcile'], cli);
    expect(reconcile.code, reconcile.stdout + reconcile.stderr).toBe(0);
  });
});
