// A worker process killed with SIGKILL while it holds a full execution batch (EXECUTION_BATCH_JOBS_MAX payments of one
// payout batch), at two places: after its poller fetched the jobs and before its claim; after the claim and before the
// signatures. A worker started after it resumes every one of them within the execution lease and a sweep or two (the
// deadline below), with pg-boss's own expiry of the dead worker's jobs a minute away, and pays each once. The test holds
// the worker at its place with a row lock, as a slow statement would, and kills it there: nothing in the service knows.
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { EXECUTION_BATCH_JOBS_MAX } from '../../src/bounds.js';
import { EXECUTION_QUEUE } from '../../src/jobs/queue.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const PAYMENTS = EXECUTION_BATCH_JOBS_MAX;
const LEASE_SECONDS = 3;
/**
 * From the kill to every payment sent: the lease running out, a sweep (half a lease), the next worker's start-up and
 * the resumed batch's run. pg-boss alone would take EXECUTION_JOB_TIMEOUT_SECONDS (60 by default) and a maintenance.
 */
const RESUMED_WITHIN_MS = 20_000;

let db: TestDatabase | undefined;
const processes: ServiceProcess[] = [];
afterEach(async () => {
  await killAll(processes);
  processes.length = 0;
  await db?.drop();
  db = undefined;
});

function env(database: TestDatabase, port: number): Record<string, string> {
  return {
    DATABASE_URL: database.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    SIM_CONFIRM_SECONDS: '0.5',
    SIM_FAILURE_RATE: '0',
    CONFIRMATION_POLL_SECONDS: '0.2',
    HEALTH_COLLECT_SECONDS: '1',
    EXECUTION_LEASE_SECONDS: String(LEASE_SECONDS),
  };
}

function start(args: string[], environment: Record<string, string>): ServiceProcess {
  const service = startService(args, environment);
  processes.push(service);
  return service;
}

/** An `api` process (no workers) queues a payout batch of PAYMENTS payments; nothing runs them yet. */
async function queuePayouts(database: TestDatabase): Promise<string[]> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const api = start(['api'], env(database, port));
  await waitHealthy(base, api);
  const created = await fetch(`${base}/payout_batches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
    body: JSON.stringify({
      idempotency_key: 'killed-worker',
      items: Array.from({ length: PAYMENTS }, (_, i) => ({
        idempotency_key: `killed-worker-${i}`,
        amount_usd: 1 + i,
        priority: 'fast',
        destination: { solana_address: SOL },
      })),
    }),
  });
  expect(created.status, await created.clone().text()).toBe(201);
  return ((await created.json()) as { items: { payment_intent: { payment_intent_id: string } }[] }).items.map((item) => item.payment_intent.payment_intent_id);
}

/** Whether a backend waits for a lock in a statement LIKE `pattern` (the held worker's). */
async function waitsInStatement(database: TestDatabase, pattern: string): Promise<boolean> {
  const { rows } = await database.pool.query(
    "SELECT COUNT(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE $1",
    [pattern],
  );
  return rows[0].n > 0;
}

/**
 * Holds a worker at a place with `lock` (a statement on `locker`'s open transaction), kills it there with SIGKILL once
 * `held` says it is there, lets the dead worker's orphaned statement go (it ends and rolls back when it finds its
 * client gone), and starts another worker. Answers how long after the kill every payment was sent.
 */
async function killHeldWorker(database: TestDatabase, ids: string[], lock: (locker: pg.PoolClient) => Promise<unknown>, held: () => Promise<boolean>): Promise<number> {
  const locker = await database.pool.connect();
  let killedAt: number;
  try {
    await locker.query('BEGIN');
    await lock(locker);
    const worker = start(['worker'], env(database, await freePort()));
    await waitFor('the worker held at its place', async () => {
      if (worker.child.exitCode !== null) throw new Error(`worker exited: ${worker.output().slice(-1500)}`);
      return held();
    });
    worker.child.kill('SIGKILL');
    await worker.exited;
    killedAt = Date.now();
    await locker.query('ROLLBACK');
  } finally {
    locker.release();
  }
  const next = start(['worker'], env(database, await freePort()));
  let sent = 0;
  await waitFor(
    'every payment sent',
    async () => {
      if (next.child.exitCode !== null) throw new Error(`worker exited: ${next.output().slice(-1500)}`);
      const { rows } = await database.pool.query(
        "SELECT COUNT(*)::int AS n FROM payment_intents WHERE id = ANY($1::text[]) AND status IN ('broadcasted', 'pending_confirmation', 'settled')",
        [ids],
      );
      sent = rows[0].n;
      return sent === ids.length;
    },
    RESUMED_WITHIN_MS - (Date.now() - killedAt),
    100,
  ).catch((error: unknown) => {
    throw new Error(`${sent} of ${ids.length} payments sent ${RESUMED_WITHIN_MS} ms after the kill`, { cause: error });
  });
  const resumedMs = Date.now() - killedAt;
  await waitFor('every payment settled', async () => {
    const { rows } = await database.pool.query("SELECT COUNT(*)::int AS n FROM payment_intents WHERE id = ANY($1::text[]) AND status = 'settled'", [ids]);
    return rows[0].n === ids.length;
  });
  return resumedMs;
}

/** Each payment paid once, signed once, debited once; the books verify. */
async function expectPaidOnce(database: TestDatabase, ids: string[]): Promise<void> {
  const payouts = await database.pool.query<{ ref: string; n: number }>('SELECT ref, COUNT(*)::int AS n FROM sim_payouts GROUP BY ref');
  expect(payouts.rows.map((r) => r.ref).sort()).toEqual([...ids].sort());
  for (const row of payouts.rows) expect(row.n, `payouts of ${row.ref}`).toBe(1);
  const attempts = await database.pool.query('SELECT payment_intent_id, COUNT(*)::int AS n FROM payment_attempts GROUP BY 1');
  expect(attempts.rows).toHaveLength(ids.length);
  for (const row of attempts.rows) expect(row.n, `attempts of ${row.payment_intent_id}`).toBe(1);
  const debits = await database.pool.query("SELECT payment_intent_id, COUNT(*)::int AS n FROM ledger_transactions WHERE type = 'debit' GROUP BY 1");
  expect(debits.rows).toHaveLength(ids.length);
  for (const row of debits.rows) expect(row.n, `debits of ${row.payment_intent_id}`).toBe(1);
  await killAll(processes);
  const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: database.url });
  expect(verify.code, verify.stdout + verify.stderr).toBe(0);
}

describe('a worker killed holding a batch', () => {
  it('between its fetch and its claim: another worker resumes the batch within the lease and a sweep, once', { timeout: 120_000 }, async () => {
    db = await createTestDatabase();
    const database = db;
    const ids = await queuePayouts(database);
    // The claim locks the payments FOR UPDATE; this lock lets everything else (the fetch included) through.
    const resumedMs = await killHeldWorker(
      database,
      ids,
      (locker) => locker.query('SELECT id FROM payment_intents WHERE id = ANY($1::text[]) FOR NO KEY UPDATE', [ids]),
      async () => {
        const { rows } = await database.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = $1 AND state = 'active'", [EXECUTION_QUEUE]);
        return rows[0].n === ids.length && (await waitsInStatement(database, 'SELECT % FROM payment_intents WHERE id = ANY(%) ORDER BY id FOR UPDATE')) && (await statuses(database, ids)).every((s) => s === 'route_selected');
      },
    );
    console.info(`killed between fetch and claim: ${ids.length} payments sent ${(resumedMs / 1000).toFixed(1)} s after the kill`);
    await expectPaidOnce(database, ids);
  });

  it('between its claim and its signatures: another worker resumes the batch within the lease and a sweep, once', { timeout: 120_000 }, async () => {
    db = await createTestDatabase();
    const database = db;
    const ids = await queuePayouts(database);
    // A simulated signature takes the wallet's sequence under its row lock, after the claim committed.
    const resumedMs = await killHeldWorker(
      database,
      ids,
      (locker) => locker.query("SELECT chain FROM sim_wallets WHERE chain = 'solana' FOR UPDATE"),
      async () => (await waitsInStatement(database, 'UPDATE sim_wallets %')) && (await statuses(database, ids)).every((s) => s === 'broadcasting'),
    );
    console.info(`killed between claim and signature: ${ids.length} payments sent ${(resumedMs / 1000).toFixed(1)} s after the kill`);
    await expectPaidOnce(database, ids);
  });
});

async function statuses(database: TestDatabase, ids: string[]): Promise<string[]> {
  const { rows } = await database.pool.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = ANY($1::text[])', [ids]);
  return rows.map((r) => r.status);
}
