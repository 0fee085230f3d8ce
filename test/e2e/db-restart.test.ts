// PostgreSQL restarted (fast and immediate) and its sessions killed under a steady load of payouts: `serve`, `api` and
// `worker` stay up and reconnect by themselves (pools, LISTEN connections, pg-boss); /health answers 503 while the
// database is away and 200 again after; a creation succeeds within seconds of its return; every 5xx is a clean 503
// that changed nothing (a retry of its key creates the payment, it does not replay one); every payment ends once and
// is paid at most once; `ledger verify` and `reconcile` are clean. The server is the test's own (private-postgres.ts).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'db-restart-secret';
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ETH = '0x52908400098527886E0F7030069857D2E4169EE7';
/** Payout loops running at once, and the pause each takes after a payout: a steady load, not a benchmark. */
const LOAD_LOOPS = 4;
const LOAD_PAUSE_MS = 50;
/** A client's pause before it retries after a 503 or a refused connection. */
const RETRY_PAUSE_MS = 100;
/** How soon after the database is back a creation must succeed again, on every api process. */
const CREATION_BACK_WITHIN_MS = 10_000;
/** A client gives up on one payout after this long (a process that died never answers again). */
const PAYOUT_DEADLINE_MS = 30_000;

let server: PrivatePostgres;
let receiver: Receiver;
let admin: pg.Pool;
const processes: ServiceProcess[] = [];
/** Folders of embedded servers, removed at the end (after their service is gone). */
const folders: string[] = [];

beforeAll(async () => {
  server = await startPrivatePostgres();
  receiver = await startReceiver(SECRET);
  admin = new pg.Pool({ connectionString: server.url, max: 2 });
  admin.on('error', () => undefined);
});
afterAll(async () => {
  await killAll(processes);
  await admin?.end();
  await receiver?.close();
  await server?.remove();
  for (const folder of folders) {
    const pid = await postmasterOf(folder).catch(() => null);
    if (pid !== null) process.kill(pid, 'SIGQUIT'); // a service killed -9 leaves its embedded server behind
    await rm(folder, { recursive: true, force: true });
  }
});

/** The pid of the embedded server running in DATA_DIR `folder` (its postmaster.pid). */
async function postmasterOf(folder: string): Promise<number> {
  return Number((await readFile(join(folder, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the load saw: answers that break the contract, and when each api last created a payment. */
interface LoadReport {
  violations: string[];
  unavailable: number;
  /** Quotes a crash of PostgreSQL took back after they were answered (decision 135): the client quotes again. */
  quotesLost: number;
  created: Map<string, string>; // idempotency key -> payment id
  lastCreatedAt: Map<string, number>; // base url -> Date.now() of its last 201
}

/** A 5xx must be the spec's error body, 503 SERVICE_UNAVAILABLE; anything else is recorded. True: retry. */
async function unavailable(res: Response, what: string, report: LoadReport): Promise<boolean> {
  if (res.status < 500) return false;
  const body = (await res.json().catch(() => null)) as Record<string, unknown> | null;
  const clean =
    res.status === 503 &&
    body?.statusCode === 503 &&
    body.error === 'Service Unavailable' &&
    body.code === 'SERVICE_UNAVAILABLE' &&
    typeof body.message === 'string';
  if (!clean) report.violations.push(`${what}: ${res.status} ${JSON.stringify(body)}`);
  report.unavailable++;
  return true;
}

async function post(base: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
    body: JSON.stringify(body),
  });
}

/**
 * One payout as a careful client makes it: retries the quote, then the creation under one key, until 201. A quote
 * committed without waiting for the disk can be lost to a crash of PostgreSQL right after its answer (decision 135):
 * the creation then answers QUOTE_NOT_FOUND and the client quotes again, under the same key.
 */
async function payout(base: string, key: string, i: number, report: LoadReport, running: () => boolean): Promise<void> {
  for (;;) {
    const outcome = await quotedPayout(base, key, i, report, running);
    if (outcome !== 'quote lost') return;
    report.quotesLost++;
  }
}

async function quotedPayout(base: string, key: string, i: number, report: LoadReport, running: () => boolean): Promise<'done' | 'quote lost'> {
  const destination = i % 2 ? { solana_address: SOL } : { ethereum_address: ETH };
  let quoteId: string | undefined;
  while (quoteId === undefined) {
    if (!running()) return 'done';
    const res = await post(base, '/quotes', { amount_usd: 1 + (i % 7), destination, priority: 'fast' }).catch((error: unknown) => error as Error);
    if (res instanceof Error) report.violations.push(`quote ${key}: ${String(res.cause ?? res)}`);
    else if (res.status === 201) quoteId = ((await res.json()) as { quote_id: string }).quote_id;
    else if (!(await unavailable(res, `quote ${key}`, report))) report.violations.push(`quote ${key}: ${res.status} ${await res.text()}`);
    if (quoteId === undefined) await pause(RETRY_PAUSE_MS);
  }
  let refused = false; // a 503 came first: the retry must create the payment, not replay it
  for (const deadline = Date.now() + PAYOUT_DEADLINE_MS; ; ) {
    if (Date.now() > deadline) {
      report.violations.push(`create ${key}: no 201 within ${PAYOUT_DEADLINE_MS} ms`);
      return 'done';
    }
    const res = await post(base, '/payment_intents', { quote_id: quoteId, idempotency_key: key }).catch((error: unknown) => error as Error);
    if (res instanceof Error) report.violations.push(`create ${key}: ${String(res.cause ?? res)}`);
    else if (res.status === 201) {
      if (refused && res.headers.get('idempotent-replayed') === 'true') report.violations.push(`create ${key}: a 503 had created the payment`);
      report.created.set(key, ((await res.json()) as { payment_intent_id: string }).payment_intent_id);
      report.lastCreatedAt.set(base, Date.now());
      return 'done';
    } else if (await unavailable(res, `create ${key}`, report)) refused = true;
    else {
      const text = await res.text();
      if (res.status === 404 && (JSON.parse(text) as { code?: string }).code === 'QUOTE_NOT_FOUND') return 'quote lost';
      report.violations.push(`create ${key}: ${res.status} ${text}`);
      return 'done';
    }
    // Once the load stops, a payout already started is still carried through, as a client would.
    await pause(RETRY_PAUSE_MS);
  }
}

function startLoad(bases: string[], keyPrefix: string): { report: LoadReport; stop(): Promise<void> } {
  const report: LoadReport = { violations: [], unavailable: 0, quotesLost: 0, created: new Map(), lastCreatedAt: new Map() };
  let running = true;
  const loops = Array.from({ length: LOAD_LOOPS }, async (_, loop) => {
    for (let n = 0; running; n++) {
      await payout(bases[(loop + n) % bases.length]!, `${keyPrefix}-${loop}-${n}`, n, report, () => running);
      await pause(LOAD_PAUSE_MS);
    }
  });
  return {
    report,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** The console's live stream: counts `ready` (the LISTEN connection is (back) up) and `payment` events. */
function watchEvents(base: string): { ready: number; payments: number; close(): void } {
  const seen = { ready: 0, payments: 0, close: () => controller.abort() };
  const controller = new AbortController();
  void (async () => {
    const res = await fetch(`${base}/admin/events`, { signal: controller.signal });
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      const events = buffered.split('\n\n');
      buffered = events.pop()!;
      for (const event of events) {
        if (event.includes('event: ready')) seen.ready++;
        if (event.includes('event: payment')) seen.payments++;
      }
    }
  })().catch(() => undefined);
  return seen;
}

/** LISTEN connections the processes hold, by application name. */
async function listeners(): Promise<Record<string, number>> {
  const { rows } = await admin.query<{ name: string; n: number }>(
    `SELECT application_name AS name, COUNT(*)::int AS n FROM pg_stat_activity
     WHERE application_name IN ('stableroute-facts', 'stableroute-webhooks-listener', 'stableroute-listen-stableroute_intents')
     GROUP BY 1`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.n]));
}

describe('a PostgreSQL restart under load', () => {
  it('every process stays up and reconnects; no 5xx changes anything; no payment lost or paid twice', { timeout: 150_000 }, async () => {
    const [servePort, apiPort] = [await freePort(), await freePort()];
    const env = (port: number) => ({
      DATABASE_URL: server.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_SIGNING_SECRET: SECRET,
      DEV_MERCHANT_WEBHOOK_URL: receiver.url,
      RATE_LIMIT_PER_MINUTE: '0',
      SIM_CONFIRM_SECONDS: '0.5',
      CONFIRMATION_POLL_SECONDS: '0.2',
      WEBHOOK_POLL_SECONDS: '0.2',
      WEBHOOK_RETRY_DELAY_SECONDS: '0.2',
      // The execution's three tries (decision 58) span 2 + 4 s, each run given 10 s: an outage longer than that, or a
      // run held up by it beyond its timeout three times, sets a payout aside for an operator (as it should). With 1 + 2
      // and 5 s, a loaded CI machine met that twice (a stop-then-start under two test forks), and the test then
      // checks a designed refusal, not the restart.
      EXECUTION_RETRY_DELAY_SECONDS: '2',
      EXECUTION_JOB_TIMEOUT_SECONDS: '10',
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
        if (p.child.exitCode !== null || p.child.signalCode !== null) {
          throw new Error(`${name} exited with ${p.child.exitCode ?? p.child.signalCode}: ${p.output().slice(-3000)}`);
        }
      }
    };
    const healthOf = async (base: string) => {
      alive();
      return fetch(`${base}/health`).then((r) => r.status);
    };
    const events = watchEvents(serveBase);
    await waitFor('the event stream ready', async () => events.ready >= 1);
    await waitFor('the worker listening', async () => (await listeners())['stableroute-webhooks-listener'] === 2);

    const load = startLoad([serveBase, apiBase], 'restarts');
    const log: string[] = [];
    try {
      await waitFor('payouts flowing', async () => (alive(), load.report.created.size >= 10));
      const rounds: [string, () => Promise<void>][] = [
        ['pg_ctl restart -m fast', () => server.restart('fast')],
        ['pg_terminate_backend', async () => void log.push(`  ended ${await server.terminateBackends()} sessions`)],
        ['pg_ctl restart -m immediate', () => server.restart('immediate')],
        ['pg_ctl stop -m fast, then start', () => outage('fast')],
        ['pg_terminate_backend', async () => void log.push(`  ended ${await server.terminateBackends()} sessions`)],
        ['pg_ctl stop -m immediate, then start', () => outage('immediate')],
        ['pg_terminate_backend', async () => void log.push(`  ended ${await server.terminateBackends()} sessions`)],
      ];
      // A stop long enough to be seen: /health must say so on every api process before the server comes back.
      const outage = async (mode: 'fast' | 'immediate') => {
        await server.stop(mode);
        for (const base of [serveBase, apiBase]) await waitFor(`${base}/health not 200 while the database is down`, async () => (await healthOf(base)) === 503);
        await server.start();
      };
      for (const [name, act] of rounds) {
        const readyBefore = events.ready;
        const paymentsBefore = events.payments;
        await act();
        const back = Date.now();
        for (const base of [serveBase, apiBase]) {
          await waitFor(`${base}: a creation after "${name}"`, async () => (alive(), (load.report.lastCreatedAt.get(base) ?? 0) > back), CREATION_BACK_WITHIN_MS);
          await waitFor(`${base}/health 200 after "${name}"`, async () => (await healthOf(base)) === 200);
        }
        const recovered = Date.now() - back;
        await waitFor(`LISTEN connections back after "${name}"`, async () => {
          const n = await listeners();
          return n['stableroute-facts'] === 2 && n['stableroute-webhooks-listener'] === 2 && n['stableroute-listen-stableroute_intents'] === 1;
        });
        await waitFor(`the event stream ready again and live after "${name}"`, async () => events.ready > readyBefore && events.payments > paymentsBefore);
        log.push(`${name}: creations on both api processes ${recovered} ms after the database was back`);
        alive();
      }
    } finally {
      await load.stop();
      events.close();
    }
    alive();
    console.log([...log, `${load.report.created.size} payouts created, ${load.report.unavailable} answers 503, ${load.report.quotesLost} quotes lost to a crash`].join('\n'));
    expect(load.report.violations).toEqual([]);

    // `serve` goes: what the api now creates only the worker process can pay, so its queue and loops came back too.
    delete named.serve;
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const after = startLoad([apiBase], 'after');
    await waitFor('payouts created after serve stopped', async () => after.report.created.size >= 6);
    await after.stop();
    expect(after.report.violations).toEqual([]);
    const created = new Map([...load.report.created, ...after.report.created]);

    await waitFor(
      'every payment final',
      async () => {
        alive();
        const { rows } = await admin.query<{ status: string; reason: string | null; n: number }>(
          `SELECT i.status, (SELECT t.reason FROM payment_intent_transitions t WHERE t.payment_intent_id = i.id ORDER BY t.id DESC LIMIT 1) AS reason,
                  COUNT(*)::int AS n
             FROM payment_intents i WHERE i.kind = 'payout' AND i.status NOT IN ('settled', 'failed') GROUP BY 1, 2`,
        );
        if (rows.length > 0) throw new Error(`still open: ${JSON.stringify(rows)}`);
        return true;
      },
      60_000,
      200,
    );
    const intents = await admin.query<{ id: string; key: string; status: string }>(
      "SELECT id, idempotency_key AS key, status FROM payment_intents WHERE kind = 'payout'",
    );
    const byStatus = new Map<string, number>();
    for (const r of intents.rows) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
    console.log([...byStatus].map(([status, n]) => `${n} ${status}`).join(', '));
    // One payment per key a client created, and no other.
    expect(new Map(intents.rows.map((r) => [r.key, r.id]))).toEqual(created);
    const payouts = await admin.query<{ ref: string; n: number }>("SELECT ref, COUNT(*)::int AS n FROM sim_payouts GROUP BY 1");
    for (const row of payouts.rows) expect(row.n, `payouts of ${row.ref}`).toBe(1);
    const paid = new Set(payouts.rows.map((r) => r.ref));
    for (const intent of intents.rows) expect(paid.has(intent.id), `${intent.id} ${intent.status}`).toBe(intent.status === 'settled');
    const debits = await admin.query("SELECT payment_intent_id, COUNT(*)::int AS n FROM ledger_transactions WHERE type = 'debit' GROUP BY 1 HAVING COUNT(*) > 1");
    expect(debits.rows).toEqual([]);

    api.child.kill('SIGTERM');
    worker.child.kill('SIGTERM');
    expect([await api.exited, await worker.exited]).toEqual([0, 0]);
    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: server.url });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    const reconcile = await runCommand(['reconcile'], { DATABASE_URL: server.url });
    expect(reconcile.code, reconcile.stdout + reconcile.stderr).toBe(0);
  });
});

describe('the embedded PostgreSQL of `serve`', () => {
  it('is started again when it stops under the service (fast, then immediate), and stops with it', { timeout: 90_000 }, async () => {
    const folder = await mkdtemp(join(tmpdir(), 'stableroute-embedded-restart-'));
    folders.push(folder);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = startService(['serve'], { DATA_DIR: folder, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '0' });
    processes.push(service);
    await waitHealthy(base, service, 60_000);
    const report: LoadReport = { violations: [], unavailable: 0, quotesLost: 0, created: new Map(), lastCreatedAt: new Map() };
    const health = async () => {
      if (service.child.exitCode !== null) throw new Error(`serve exited: ${service.output().slice(-3000)}`);
      return (await fetch(`${base}/health`)).status;
    };
    // SIGINT and SIGQUIT are what pg_ctl stop sends for a fast and an immediate shutdown.
    for (const [signal, n] of [['SIGINT', 0], ['SIGQUIT', 1]] as const) {
      const pid = await postmasterOf(folder);
      process.kill(pid, signal);
      await waitFor(`/health 503 once the server is gone (${signal})`, async () => (await health()) === 503);
      await waitFor(`/health 200 once the server is back (${signal})`, async () => (await health()) === 200, 30_000);
      await payout(base, `embedded-${n}`, n, report, () => true);
      expect(await postmasterOf(folder)).not.toBe(pid);
    }
    expect(report.violations).toEqual([]);
    expect(report.created.size).toBe(2);
    const pid = await postmasterOf(folder);
    service.child.kill('SIGTERM');
    expect(await service.exited, service.output().slice(-3000)).toBe(0);
    expect(isAlive(pid)).toBe(false); // stopped with its owner
  });
});
