// A primary lost under load and its synchronous standby promoted, with no restart of the service: `serve`, `api` and
// `worker` run on a DATABASE_URL naming both servers (libpq's several hosts, target_session_attrs=read-write), answer
// /health 503 and clean 503s while there is no writable server, find the promoted standby by themselves (pools, LISTEN
// connections, pg-boss) and carry on; no process exits; every payment answered 201 exists on the new primary and is
// paid once; payments created after the promotion settle and their webhooks arrive. The servers are the test's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { startLoad } from '../helpers/payout-load.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replicated-postgres.js';

const SECRET = 'failover-secret';
/** How soon after the promotion every api process must answer /health 200 and create payments again. */
const BACK_WITHIN_MS = 15_000;

let pair: ReplicatedPostgres;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  pair = await startReplicatedPostgres({ synchronous: true });
  receiver = await startReceiver(SECRET);
});
afterAll(async () => {
  await killAll(processes);
  await receiver?.close();
  await pair?.remove();
});

async function rowsOf<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('failover to a promoted standby, without a restart', () => {
  it('every process finds the new primary by itself; nothing answered 201 is lost or paid twice', { timeout: 180_000 }, async () => {
    const [servePort, apiPort] = [await freePort(), await freePort()];
    const env = (port: number) => ({
      DATABASE_URL: pair.urls.failover,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_SIGNING_SECRET: SECRET,
      DEV_MERCHANT_WEBHOOK_URL: receiver.url,
      RATE_LIMIT_PER_MINUTE: '0',
      SIM_CONFIRM_SECONDS: '0.5',
      CONFIRMATION_POLL_SECONDS: '0.2',
      WEBHOOK_POLL_SECONDS: '0.2',
      WEBHOOK_RETRY_DELAY_SECONDS: '0.2',
      EXECUTION_RETRY_DELAY_SECONDS: '1',
      EXECUTION_JOB_TIMEOUT_SECONDS: '5',
      EXECUTION_LEASE_SECONDS: '2',
      HEALTH_COLLECT_SECONDS: '1',
      STUCK_AFTER_SECONDS: '120',
    });
    const serveBase = `http://127.0.0.1:${servePort}`;
    const apiBase = `http://127.0.0.1:${apiPort}`;
    const serve = startService(['serve'], env(servePort));
    processes.push(serve);
    await waitHealthy(serveBase, serve);
    const api = startService(['api'], env(apiPort));
    const worker = startService(['worker'], env(0));
    processes.push(api, worker);
    await waitHealthy(apiBase, api);
    const named: Record<string, ServiceProcess> = { serve, api, worker };
    const alive = () => {
      for (const [name, p] of Object.entries(named)) {
        if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${name} exited with ${p.child.exitCode ?? p.child.signalCode}: ${p.output().slice(-3000)}`);
      }
    };
    const health = async (base: string) => (alive(), (await fetch(`${base}/health`)).status);
    // Everything connected to the primary, nothing to the standby (it is read-only: target_session_attrs=read-write).
    const clientsOf = async (url: string) =>
      (await rowsOf<{ n: number }>(url, "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE 'stableroute%'"))[0]!.n;
    await waitFor('the worker listening on the primary', async () => (await clientsOf(pair.urls.primary)) > 0);
    expect(await clientsOf(pair.urls.standby)).toBe(0);

    const load = startLoad([serveBase, apiBase], 'failover', { loops: 4, pauseMs: 50 });
    let promotedAt = 0;
    try {
      await waitFor('payouts flowing', async () => (alive(), load.report.created.size >= 12));
      await pair.stopPrimary('immediate');
      for (const base of [serveBase, apiBase]) await waitFor(`${base}/health 503 while there is no primary`, async () => (await health(base)) === 503);
      await pair.promoteStandby();
      promotedAt = Date.now();
      for (const base of [serveBase, apiBase]) {
        await waitFor(`${base}/health 200 after the promotion`, async () => (await health(base)) === 200, BACK_WITHIN_MS);
        await waitFor(`${base}: a creation after the promotion`, async () => (alive(), (load.report.lastCreatedAt.get(base) ?? 0) > promotedAt), BACK_WITHIN_MS);
      }
      console.log(`creations on both api processes ${Date.now() - promotedAt} ms after the promotion`);
      await waitFor(
        'the LISTEN connections on the new primary',
        async () => {
          const rows = await rowsOf<{ name: string; n: number }>(
            pair.urls.standby,
            `SELECT application_name AS name, COUNT(*)::int AS n FROM pg_stat_activity
             WHERE application_name IN ('stableroute-facts', 'stableroute-webhooks-listener') GROUP BY 1`,
          );
          const n = Object.fromEntries(rows.map((r) => [r.name, r.n]));
          // The quote facts cache of each api process, the webhook worker's wake-up of each worker process.
          if (n['stableroute-facts'] === 2 && n['stableroute-webhooks-listener'] === 2) return true;
          throw new Error(JSON.stringify(n));
        },
        BACK_WITHIN_MS,
      );
      await waitFor('more payouts after the promotion', async () => (alive(), [...load.report.lastCreatedAt.values()].filter((t) => t > promotedAt).length === 2));
    } finally {
      await load.stop();
    }
    alive();
    console.log(`${load.report.created.size} payouts created, ${load.report.unavailable} answers 503, ${load.report.quotesLost} quotes lost to the crash`);
    expect(load.report.violations).toEqual([]);

    const newPrimary = pair.urls.standby;
    await waitFor(
      'every payment final on the new primary',
      async () => {
        alive();
        const open = await rowsOf(newPrimary, "SELECT id, status FROM payment_intents WHERE kind = 'payout' AND status NOT IN ('settled', 'failed')");
        if (open.length > 0) throw new Error(`still open: ${JSON.stringify(open)}`);
        return true;
      },
      60_000,
      200,
    );
    const intents = await rowsOf<{ id: string; key: string; status: string }>(newPrimary, "SELECT id, idempotency_key AS key, status FROM payment_intents WHERE kind = 'payout'");
    // Synchronous replication: every creation answered 201, before the loss or after, is there, and nothing else.
    expect(new Map(intents.map((r) => [r.key, r.id]))).toEqual(load.report.created);
    expect(intents.filter((r) => r.status !== 'settled')).toEqual([]);
    const payouts = await rowsOf<{ ref: string; n: number }>(newPrimary, 'SELECT ref, COUNT(*)::int AS n FROM sim_payouts GROUP BY 1');
    expect(payouts.filter((p) => p.n !== 1)).toEqual([]);
    expect(new Set(payouts.map((p) => p.ref))).toEqual(new Set(intents.map((r) => r.id)));
    await waitFor('a payment.settled webhook for every payment', async () => {
      const settled = new Set(receiver.events.filter((e) => e.event_type === 'payment.settled').map((e) => e.payment_intent_id));
      return intents.every((r) => settled.has(r.id));
    });

    // The CLI takes the same URL and finds the same primary.
    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: pair.urls.failover });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    for (const p of [serve, api, worker]) p.child.kill('SIGTERM');
    expect([await serve.exited, await api.exited, await worker.exited]).toEqual([0, 0, 0]);
  });
});
