// PgBouncer in front of PostgreSQL (decision 194). Session mode: the whole payout path runs through it, `serve` and the
// CLI alike, with the service's session timeouts in force (PgBouncer refuses them as startup parameters). Transaction
// mode: the service refuses to start and says why, instead of starting and answering quotes with 500 (prepared
// statement "sr_0" already exists). The server and the poolers are the test's own.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { createPool } from '../../src/db/pool.js';
import { sessionsArePooledPerTransaction } from '../../src/db/session-pooling.js';
import { emptyReport, payout } from '../helpers/payout-load.js';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { startPrivatePostgres, type PrivatePostgres } from '../helpers/private-postgres.js';
import { freePort, killAll, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'pgbouncer-secret';
const PAYOUTS = 6;

let server: PrivatePostgres;
let session: PgBouncer;
let transaction: PgBouncer;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  server = await startPrivatePostgres();
  [session, transaction] = [await startPgBouncer(server.url, 'session'), await startPgBouncer(server.url, 'transaction')];
  receiver = await startReceiver(SECRET);
});
afterAll(async () => {
  await killAll(processes);
  await receiver?.close();
  await session?.remove();
  await transaction?.remove();
  await server?.remove();
});

const serverUrl = (database: string) => server.url.replace(/\/postgres$/, `/${database}`);

async function rowsOf<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('PgBouncer', () => {
  it('tells a transaction pooler from a session one and from PostgreSQL itself', async () => {
    expect(await sessionsArePooledPerTransaction(server.url)).toBe(false);
    expect(await sessionsArePooledPerTransaction(session.url('postgres'))).toBe(false);
    expect(await sessionsArePooledPerTransaction(transaction.url('postgres'))).toBe(true);
  });

  it('session mode: payouts settle through it, webhooks arrive, the CLI works, the session timeouts hold', { timeout: 120_000 }, async () => {
    const url = session.url('through_session_pooler');
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const serve = startService(['serve'], {
      DATABASE_URL: url,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_SIGNING_SECRET: SECRET,
      DEV_MERCHANT_WEBHOOK_URL: receiver.url,
      RATE_LIMIT_PER_MINUTE: '0',
      SIM_CONFIRM_SECONDS: '0.5',
      CONFIRMATION_POLL_SECONDS: '0.2',
      WEBHOOK_POLL_SECONDS: '0.2',
      HEALTH_COLLECT_SECONDS: '1',
    });
    processes.push(serve);
    await waitHealthy(base, serve);
    expect(await session.clients(), 'the service connects through the pooler').toBeGreaterThan(0);
    expect(await rowsOf(server.url.replace(/\/postgres$/, '/through_session_pooler'), 'SELECT 1'), 'the database was created through it').toHaveLength(1);

    const report = emptyReport();
    await Promise.all(Array.from({ length: PAYOUTS }, (_, i) => payout(base, `pooled-${i}`, i, report)));
    expect(report.violations).toEqual([]);
    expect(report.created.size).toBe(PAYOUTS);
    const direct = serverUrl('through_session_pooler');
    await waitFor('every payout settled', async () => {
      if (serve.child.exitCode !== null) throw new Error(serve.output().slice(-3000));
      const rows = await rowsOf<{ status: string }>(direct, "SELECT status FROM payment_intents WHERE kind = 'payout'");
      return rows.length === PAYOUTS && rows.every((r) => r.status === 'settled');
    });
    const payouts = await rowsOf<{ n: number }>(direct, 'SELECT COUNT(*)::int AS n FROM sim_payouts GROUP BY ref');
    expect(payouts.map((p) => p.n)).toEqual(Array(PAYOUTS).fill(1));
    await waitFor('a payment.settled webhook for each', async () => receiver.events.filter((e) => e.event_type === 'payment.settled').length === PAYOUTS);

    // The pool's session settings, which PgBouncer refuses as startup parameters, are set on each session.
    const pool = createPool(url, 1);
    try {
      const { rows } = await pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(rows[0]!.statement_timeout).toBe('30s');
    } finally {
      await pool.end();
    }
    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: url });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    serve.child.kill('SIGTERM');
    expect(await serve.exited, serve.output().slice(-3000)).toBe(0);
  });

  it('transaction mode: the service and the CLI refuse to start, naming the problem', { timeout: 90_000 }, async () => {
    const url = transaction.url('through_transaction_pooler');
    const port = await freePort();
    const serve = startService(['serve'], { DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1', RATE_LIMIT_PER_MINUTE: '0' });
    processes.push(serve);
    // Old behaviour, for the record: it started, then answered quotes with 500.
    const outcome = await waitFor('serve to exit or to answer', async () => {
      if (serve.child.exitCode !== null) return { exited: serve.child.exitCode };
      const health = await fetch(`http://127.0.0.1:${port}/health`).catch(() => null);
      if (health?.status !== 200) return null;
      const quote = await fetch(`http://127.0.0.1:${port}/quotes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
        body: JSON.stringify({ amount_usd: 1, destination: { solana_address: '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM' } }),
      });
      return { started: `quote answered ${quote.status} ${await quote.text()}` };
    });
    expect(outcome).toEqual({ exited: 1 });
    expect(serve.output()).toContain('DATABASE_URL');
    expect(serve.output()).toContain('transaction or statement mode');
    expect(serve.output()).toContain('pool_mode = session');
    const migrate = await runCommand(['migrate'], { DATABASE_URL: url });
    expect(migrate.code).toBe(1);
    expect(migrate.stderr).toContain('pool_mode = session');
    // The read server behind one too (its prepared statements would collide the same way).
    const reader = startService(['serve'], {
      DATABASE_URL: serverUrl('direct_with_pooled_reads'),
      DATABASE_READ_URL: transaction.url('direct_with_pooled_reads'),
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
    });
    processes.push(reader);
    expect(await waitFor('serve to exit', async () => reader.child.exitCode !== null && { code: reader.child.exitCode }, 60_000)).toEqual({ code: 1 });
    expect(reader.output()).toContain('DATABASE_READ_URL');
    expect(reader.output()).toContain('pool_mode = session');
  });
});
