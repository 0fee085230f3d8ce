// A safe failover (issue 36): a primary with a SYNCHRONOUS standby (synchronous_commit=on, synchronous_standby_names
// naming it). Payouts on both devnet chains run under load; the primary is stopped with -m immediate in the middle of it,
// the standby promoted and the service started on it. Nothing acknowledged is lost and nothing is paid twice: every
// creation answered 201 exists and settles, every payment is paid exactly once on chain, ledger verify and reconcile
// are clean, webhooks arrive. The new timeline holds both chains until their treasuries are checked; every transaction
// is in the books, so both resume by themselves, with no alert and no operator.
import { getBase58Decoder } from '@solana/kit';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { getAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { ethereumUsdcOf, solanaUsdcOf } from '../helpers/chain-balances.js';
import { devnetEnv } from '../helpers/devnet.js';
import { KEY } from '../helpers/devnet-cli.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replicated-postgres.js';

const SECRET = 'failover-sync-secret';
/** Payout loops running at once: a steady load, each creating one payout after the other. */
const LOAD_LOOPS = 4;
/** Payments settled on the primary before it is stopped, with more in flight. */
const SETTLED_BEFORE_CRASH = 16;

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let pair: ReplicatedPostgres;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  [eth, sol, pair, receiver] = await Promise.all([
    startEthereumDevnet({ blockTimeSeconds: 1 }),
    startSolanaDevnet({ slotMs: 100, finalizeAfterSlots: 4 }),
    startReplicatedPostgres({ synchronous: true }),
    startReceiver(SECRET),
  ]);
}, 120_000);
afterAll(async () => {
  await killAll(processes);
  await Promise.all([eth?.stop(), sol?.stop(), pair?.remove(), receiver?.close()]);
});

function env(url: string, port: number): Record<string, string> {
  return devnetEnv(eth, sol, {
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_SIGNING_SECRET: SECRET,
    DEV_MERCHANT_WEBHOOK_URL: receiver.url,
    CONFIRMATION_POLL_SECONDS: '0.5',
    HEALTH_COLLECT_SECONDS: '1',
    BOOKS_CHECK_SECONDS: '0.5',
    EXECUTION_LEASE_SECONDS: '2',
  });
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One payout through the API: its id when the creation was answered 201, null on any other answer or no answer. */
async function createPayout(base: string, chain: 'ethereum' | 'solana', to: string, amountMicros: bigint, key: string): Promise<string | null> {
  try {
    const destination = chain === 'ethereum' ? { ethereum_address: to } : { solana_address: to };
    const quote = await fetch(`${base}/quotes`, { method: 'POST', headers: KEY, body: JSON.stringify({ amount_usd: Number(amountMicros) / 1e6, destination, priority: 'fast' }) });
    if (quote.status !== 201) return null;
    const { quote_id } = (await quote.json()) as { quote_id: string };
    const created = await fetch(`${base}/payment_intents`, { method: 'POST', headers: KEY, body: JSON.stringify({ quote_id, idempotency_key: key }) });
    return created.status === 201 ? ((await created.json()) as { payment_intent_id: string }).payment_intent_id : null;
  } catch {
    return null;
  }
}

describe('a synchronous standby promoted when its primary dies under load', () => {
  it('loses nothing acknowledged and pays nothing twice; both chains resume by themselves', { timeout: 300_000 }, async () => {
    const primaryUrl = pair.urls.primary;
    const standbyUrl = pair.urls.standby;
    const firstPort = await freePort();
    const first = startService(['serve'], env(primaryUrl, firstPort));
    processes.push(first);
    const firstBase = `http://127.0.0.1:${firstPort}`;
    await waitHealthy(firstBase, first, 120_000);

    // 1. Payouts under load, each 201 remembered, until the primary goes.
    const answered = new Map<string, { chain: 'ethereum' | 'solana'; to: string; amountMicros: bigint }>();
    let crashed = false;
    let n = 0;
    const loops = Array.from({ length: LOAD_LOOPS }, async () => {
      while (!crashed) {
        const i = n++;
        const chain = i % 2 === 0 ? 'ethereum' : 'solana';
        const to = chain === 'ethereum' ? getAddress(`0x${randomBytes(20).toString('hex')}`) : getBase58Decoder().decode(randomBytes(32));
        const amountMicros = 1_000_000n + BigInt(i) * 1_000n;
        const id = await createPayout(firstBase, chain, to, amountMicros, `load-${i}`);
        if (id !== null) answered.set(id, { chain, to, amountMicros });
      }
    });
    await waitFor(
      `${SETTLED_BEFORE_CRASH} payouts settled and more in flight on the primary`,
      async () => {
        const [row] = await query<{ settled: number; moving: number }>(
          primaryUrl,
          `SELECT COUNT(*) FILTER (WHERE status = 'settled')::int AS settled,
                  COUNT(*) FILTER (WHERE status IN ('broadcasting', 'broadcasted'))::int AS moving FROM payment_intents`,
        );
        return row!.settled >= SETTLED_BEFORE_CRASH && row!.moving > 0;
      },
      120_000,
      100,
    );

    // 2. The primary dies mid-batch; the standby is promoted; the service starts on it.
    await pair.stopPrimary('immediate');
    crashed = true;
    await Promise.all(loops);
    first.child.kill('SIGKILL');
    await first.exited;
    await pair.promoteStandby();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serve = startService(['serve'], env(standbyUrl, port));
    processes.push(serve);
    await waitHealthy(base, serve, 120_000);
    expect(answered.size).toBeGreaterThan(SETTLED_BEFORE_CRASH);

    // 3. The new timeline held both chains; once Solana is past every blockhash of the failover, both resume.
    await waitFor('solana checked once', async () => (await query(standbyUrl, "SELECT 1 FROM chain_holds WHERE chain = 'solana' AND mark IS NOT NULL")).length > 0, 60_000, 100);
    sol.advanceSlots(200);
    await waitFor(
      'both holds lifted by a check',
      async () => {
        const holds = await query<{ chain: string; lifted_by: string | null }>(standbyUrl, 'SELECT chain, lifted_by FROM chain_holds');
        return holds.length === 2 && holds.every((h) => h.lifted_by === 'check');
      },
      60_000,
      250,
    );

    // 4. Nothing lost: every 201 exists; everything the books hold settles.
    const ids = [...answered.keys()];
    const present = await query<{ id: string }>(standbyUrl, 'SELECT id FROM payment_intents WHERE id = ANY($1)', [ids]);
    expect(present.length, 'every creation answered 201 exists on the promoted standby').toBe(ids.length);
    await waitFor(
      'every payment settled',
      async () => (await query(standbyUrl, "SELECT 1 FROM payment_intents WHERE status <> 'settled'")).length === 0,
      180_000,
      250,
    );

    // 5. Nothing doubled: each recipient holds exactly its payment (every payment of the books, answered or not).
    const all = await query<{ id: string; selected_chain: string; destination_address: string; amount_micros: string }>(
      standbyUrl,
      'SELECT id, selected_chain, destination_address, amount_micros::text FROM payment_intents',
    );
    for (const p of all) {
      const held =
        p.selected_chain === 'ethereum'
          ? await ethereumUsdcOf(eth.rpcUrl, eth.usdcAddress, p.destination_address)
          : await solanaUsdcOf(sol.rpcUrl, sol.usdcMint, p.destination_address);
      expect(held, `${p.id} (${p.selected_chain} ${p.destination_address}) paid once`).toBe(BigInt(p.amount_micros));
    }
    expect(await query(standbyUrl, "SELECT 1 FROM operator_alerts WHERE kind = 'books_behind_chain'"), 'no chain was ever behind').toEqual([]);

    const cli = env(standbyUrl, 0);
    const verify = await runCommand(['ledger', 'verify'], cli);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const reconcile = await runCommand(['reconcile'], cli);
    expect(reconcile.code, reconcile.stdout + reconcile.stderr).toBe(0);
    await waitFor(
      'a payment.settled webhook for every payment',
      async () => all.every((p) => receiver.events.some((e) => e.payment_intent_id === p.id && e.event_type === 'payment.settled')),
      60_000,
      250,
    );
    expect(receiver.badSignatures).toBe(0);
  });
});
