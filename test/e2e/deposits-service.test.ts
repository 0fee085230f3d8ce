// A running service books a deposit within seconds, without a restart: `stableroute serve` on the simulated chains,
// `stableroute simulate transfer` from another process, available rises on GET /admin/overview. Stopped with SIGTERM
// mid-way and started again, it books nothing twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulatedTreasuryAddress } from '../../src/chains/simulated/adapter.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, killAll, runCommand, type ServiceProcess, startService, waitFor, waitHealthy } from '../helpers/process.js';

const SEED = 'deposits-service';
const SENDER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

let db: TestDatabase;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll([service]);
  await db.drop();
});

const env = (port: number) => ({ DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', SIM_SEED: SEED, DEPOSIT_POLL_SECONDS: '0.2' });

async function available(base: string): Promise<number> {
  const overview = (await (await fetch(`${base}/admin/overview`)).json()) as { treasury_balances: { chain: string; available_balance: number }[] };
  return overview.treasury_balances.find((b) => b.chain === 'solana')!.available_balance;
}

describe('deposit scanner in a running service', () => {
  it('books a simulated deposit within seconds, and once across a restart', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = startService(['serve'], env(port));
    await waitHealthy(base, service);
    const before = await available(base);
    const treasury = simulatedTreasuryAddress('solana', SEED);

    const sent = await runCommand(['simulate', 'transfer', '--chain', 'solana', '--from', SENDER, '--to', treasury, '--usdc', '42'], env(port));
    expect(sent.code, sent.stderr).toBe(0);
    await waitFor('the deposit booked', async () => (await available(base)) === before + 42, 20_000, 100);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    await runCommand(['simulate', 'transfer', '--chain', 'solana', '--from', SENDER, '--to', treasury, '--usdc', '8'], env(port));
    service = startService(['serve'], env(port));
    await waitHealthy(base, service);
    await waitFor('the second deposit booked', async () => (await available(base)) === before + 50, 20_000, 100);
    const { rows } = await db.pool.query("SELECT COUNT(*)::int AS n FROM inbound_transfers WHERE chain = 'solana'");
    expect(rows[0].n).toBe(2);
    const check = await runCommand(['reconcile'], env(port));
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
