// An unsafe failover (issue 36): a primary with an ASYNCHRONOUS standby that fell behind. Payouts on both devnet chains
// are created and replicated, then the stream is cut and a worker signs, sends and lands them while only the primary
// records it; the primary dies (-m immediate), the standby is promoted and the service starts on it with books that
// lack every one of those payouts. The chains' treasuries say otherwise: the service must pay nothing twice (counted
// per recipient on chain), hold each chain whose transactions its books do not know with a `books_behind_chain` alert,
// keep paying on a chain an operator cleared while another is still held, and resume a chain once an operator
// attached its unknown transactions to the payments they paid.
import { getBase58Decoder } from '@solana/kit';
import { randomBytes } from 'node:crypto';
import { getAddress } from 'viem';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { ethereumUsdcOf, solanaUsdcOf } from '../helpers/chain-balances.js';
import { devnetEnv } from '../helpers/devnet.js';
import { pay } from '../helpers/devnet-cli.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replicated-postgres.js';

const SECRET = 'failover-async-secret';
/** Payouts per chain in the window the standby never received. */
const PER_CHAIN = 6;

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let pair: ReplicatedPostgres;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  [eth, sol, pair, receiver] = await Promise.all([
    startEthereumDevnet({ blockTimeSeconds: 1 }),
    startSolanaDevnet({ slotMs: 100, finalizeAfterSlots: 4 }),
    startReplicatedPostgres({ synchronous: false }),
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
  });
}

/** One statement on its own connection (the servers come and go in this test). */
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

function start(args: string[], url: string, port: number): ServiceProcess {
  const service = startService(args, env(url, port));
  processes.push(service);
  return service;
}

async function stop(service: ServiceProcess): Promise<void> {
  service.child.kill('SIGKILL');
  await service.exited;
}

interface Payout {
  chain: 'ethereum' | 'solana';
  to: string;
  amountMicros: bigint;
  id: string;
}

const paidOnChain = (p: Payout) =>
  p.chain === 'ethereum' ? ethereumUsdcOf(eth.rpcUrl, eth.usdcAddress, p.to) : solanaUsdcOf(sol.rpcUrl, sol.usdcMint, p.to);

describe('a standby promoted behind its primary', () => {
  it('pays nothing twice: the chains whose treasuries moved without the books are held until an operator accounts for it', { timeout: 300_000 }, async () => {
    const primaryUrl = pair.urls.primary;
    const standbyUrl = pair.urls.standby;

    // 1. The payouts are created through the api alone (no worker yet), and the standby has them.
    const apiPort = await freePort();
    const api = start(['api'], primaryUrl, apiPort);
    await waitHealthy(`http://127.0.0.1:${apiPort}`, api, 120_000);
    const payouts: Payout[] = [];
    for (let i = 0; i < 2 * PER_CHAIN; i++) {
      const chain = i % 2 === 0 ? 'ethereum' : 'solana';
      const to = chain === 'ethereum' ? getAddress(`0x${randomBytes(20).toString('hex')}`) : getBase58Decoder().decode(randomBytes(32));
      const amountMicros = BigInt(2_000_000 + i * 10_000);
      const destination = chain === 'ethereum' ? { ethereum_address: to } : { solana_address: to };
      const id = await pay(`http://127.0.0.1:${apiPort}`, Number(amountMicros) / 1e6, destination, `lost-${i}`);
      payouts.push({ chain, to, amountMicros, id });
    }
    await pair.waitStandbyCaughtUp();

    // 2. The standby falls behind for good; a worker pays everything while only the primary records it.
    await pair.detachStandby();
    const worker = start(['worker'], primaryUrl, await freePort());
    await waitFor(
      'every payout settled on the primary',
      async () => {
        const rows = await query<{ n: number }>(primaryUrl, "SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = 'settled'");
        return rows[0]!.n === payouts.length;
      },
      120_000,
      250,
    );
    for (const p of payouts) expect(await paidOnChain(p), `${p.chain} ${p.to} paid once before the failover`).toBe(p.amountMicros);

    // 3. The primary dies; the standby, which never saw a signature, is promoted; the service starts on it.
    await Promise.all([stop(api), stop(worker)]);
    await pair.stopPrimary('immediate');
    await pair.promoteStandby();
    const lost = await query<{ n: number }>(standbyUrl, 'SELECT COUNT(*)::int AS n FROM payment_attempts');
    expect(lost[0]!.n, 'the promoted standby lacks every signature').toBe(0);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serve = start(['serve'], standbyUrl, port);
    await waitHealthy(base, serve, 120_000);
    // Transactions signed before the failover could still land until their blockhashes expire: the chain moves past them.
    sol.advanceSlots(200);

    // 4. Either the chains are held, or (before issue 36) the service pays the "unsent" payouts again.
    const outcome = await waitFor(
      'both chains held with an alert, or the payouts settled again',
      async () => {
        const alerts = await query<{ chain: string }>(standbyUrl, "SELECT chain FROM operator_alerts WHERE kind = 'books_behind_chain' AND status = 'open'");
        if (alerts.length === 2) return 'held';
        const settled = await query<{ n: number }>(standbyUrl, "SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = 'settled'");
        return settled[0]!.n === payouts.length ? 'paid again' : null;
      },
      120_000,
      250,
    );
    const paidTwice = [];
    for (const p of payouts) if ((await paidOnChain(p)) !== p.amountMicros) paidTwice.push(`${p.chain} ${p.to}`);
    expect(paidTwice, `recipients paid twice (${outcome})`).toEqual([]);
    expect(outcome).toBe('held');

    // Every original payment is still waiting, unsigned, on the promoted books.
    const waiting = await query<{ n: number }>(standbyUrl, 'SELECT COUNT(*)::int AS n FROM payment_attempts');
    expect(waiting[0]!.n).toBe(0);

    // 5. What the checks found, as an operator reads it: every lost payout's transaction, none of them known.
    type Hold = { chain: string; state: string; unknown_transactions: { tx_id: string; transfers: { to: string; amount_micros: string }[] }[] };
    const holds = async () => ((await (await fetch(`${base}/admin/books`)).json()) as { data: Hold[] }).data;
    const found = new Map((await holds()).map((h) => [h.chain, h]));
    for (const chain of ['ethereum', 'solana'] as const) {
      expect(found.get(chain)?.state).toBe('behind');
      const paid = found.get(chain)!.unknown_transactions.flatMap((t) => t.transfers.map((p) => `${p.to.toLowerCase()}:${p.amount_micros}`)).sort();
      const lostOfChain = payouts.filter((p) => p.chain === chain).map((p) => `${p.to.toLowerCase()}:${p.amountMicros}`).sort();
      expect(paid, `${chain}: every payout of the lost window, found on chain`).toEqual(lostOfChain);
    }

    // 6. Ethereum is accounted for through the admin API: each unknown transaction attached to the payment it paid.
    for (const t of found.get('ethereum')!.unknown_transactions) {
      const res = await fetch(`${base}/admin/books/ethereum/attach`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tx_id: t.tx_id }) });
      expect(res.status, await res.clone().text()).toBe(200);
    }
    await waitFor('ethereum lifted, its alert resolved', async () => {
      const alerts = await query(standbyUrl, "SELECT 1 FROM operator_alerts WHERE kind = 'books_behind_chain' AND chain = 'ethereum' AND status = 'open'");
      return alerts.length === 0 && (await holds()).some((h) => h.chain === 'ethereum' && h.state === 'lifted');
    }, 60_000, 250);

    // 7. Ethereum pays again while Solana is still held: a new Ethereum payout settles, a new Solana one is not signed.
    const more: Payout[] = [
      { chain: 'ethereum', to: getAddress(`0x${randomBytes(20).toString('hex')}`), amountMicros: 3_000_000n, id: '' },
      { chain: 'solana', to: getBase58Decoder().decode(randomBytes(32)), amountMicros: 3_100_000n, id: '' },
    ];
    for (const [i, p] of more.entries()) {
      p.id = await pay(base, Number(p.amountMicros) / 1e6, p.chain === 'ethereum' ? { ethereum_address: p.to } : { solana_address: p.to }, `after-${i}`);
    }
    const settledOf = async (ids: string[]) =>
      (await query<{ n: number }>(standbyUrl, "SELECT COUNT(*)::int AS n FROM payment_intents WHERE id = ANY($1) AND status = 'settled'", [ids]))[0]!.n;
    const ethereumIds = [...payouts, ...more].filter((p) => p.chain === 'ethereum').map((p) => p.id);
    await waitFor('every ethereum payment settled', async () => (await settledOf(ethereumIds)) === ethereumIds.length, 90_000, 250);
    const solanaSigned = await query<{ n: number }>(
      standbyUrl,
      "SELECT COUNT(*)::int AS n FROM payment_attempts a JOIN payment_intents i ON i.id = a.payment_intent_id WHERE i.selected_chain = 'solana'",
    );
    expect(solanaSigned[0]!.n, 'nothing signed on the held chain').toBe(0);

    // 8. Solana is accounted for with the CLI; once the chain is past every blockhash of the failover, it resumes.
    const cli = { ...env(standbyUrl, 0), LOG_LEVEL: 'warn' };
    for (const t of found.get('solana')!.unknown_transactions) {
      const attached = await runCommand(['books', 'attach', '--chain', 'solana', '--tx', t.tx_id, '--json'], cli);
      expect(attached.code, attached.stdout + attached.stderr).toBe(0);
    }
    sol.advanceSlots(200);
    const all = [...payouts, ...more];
    await waitFor('every payment settled', async () => (await settledOf(all.map((p) => p.id))) === all.length, 120_000, 250);

    // 9. Each recipient paid exactly once on chain; the books prove themselves and agree with the chains; webhooks came.
    for (const p of all) expect(await paidOnChain(p), `${p.chain} ${p.to} paid once`).toBe(p.amountMicros);
    const open = await query(standbyUrl, "SELECT kind, chain FROM operator_alerts WHERE kind = 'books_behind_chain' AND status = 'open'");
    expect(open).toEqual([]);
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
