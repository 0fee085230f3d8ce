// One `api` and two `worker` processes on one database share the work: every payment settles once, with one
// attempt and one debit, and every webhook event reaches the merchant once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, killAll, runCommand, type ServiceProcess, startService, waitFor, waitHealthy } from '../helpers/process.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const SECRET = 'two-workers-secret';
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ETH = '0x52908400098527886E0F7030069857D2E4169EE7';
const PAYMENTS = 30;

let db: TestDatabase;
let receiver: Receiver;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  receiver = await startReceiver(SECRET);
});
afterAll(async () => {
  await killAll(processes);
  await receiver.close();
  await db.drop();
});

describe('two worker processes', () => {
  it('never process a job, an attempt or an event twice', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_SIGNING_SECRET: SECRET,
      DEV_MERCHANT_WEBHOOK_URL: receiver.url,
      SIM_CONFIRM_SECONDS: '1',
      CONFIRMATION_POLL_SECONDS: '0.1',
      WEBHOOK_POLL_SECONDS: '0.1',
      HEALTH_COLLECT_SECONDS: '0.5',
    };
    const api = startService(['api'], env);
    processes.push(api);
    await waitHealthy(base, api);
    processes.push(startService(['worker'], env), startService(['worker'], env));

    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: PAYMENTS }, async (_, i) => {
        const destination = i % 3 ? { solana_address: SOL } : { ethereum_address: ETH };
        const quote = (await (
          await fetch(`${base}/quotes`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
            body: JSON.stringify({ amount_usd: 1 + i, destination, priority: 'fast' }),
          })
        ).json()) as { quote_id: string };
        const res = await fetch(`${base}/payment_intents`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
          body: JSON.stringify({ quote_id: quote.quote_id, idempotency_key: `tw-${i}` }),
        });
        expect(res.status).toBe(201);
        ids.push(((await res.json()) as { payment_intent_id: string }).payment_intent_id);
      }),
    );

    await waitFor(
      'every payment settled and every event delivered',
      async () => {
        const open = await db.pool.query("SELECT COUNT(*)::int AS n FROM payment_intents WHERE status <> 'settled'");
        const pending = await db.pool.query("SELECT COUNT(*)::int AS n FROM webhook_events WHERE status <> 'delivered'");
        return open.rows[0].n === 0 && pending.rows[0].n === 0;
      },
      90_000,
      200,
    );

    const attempts = await db.pool.query('SELECT payment_intent_id, COUNT(*)::int AS n FROM payment_attempts GROUP BY 1');
    expect(attempts.rows).toHaveLength(PAYMENTS);
    for (const row of attempts.rows) expect(row.n).toBe(1);
    const debits = await db.pool.query("SELECT payment_intent_id, COUNT(*)::int AS n FROM ledger_transactions WHERE type IN ('debit', 'settle', 'fee') GROUP BY 1");
    for (const row of debits.rows) expect(row.n).toBe(3);
    const transitions = await db.pool.query(
      'SELECT payment_intent_id, to_status, COUNT(*)::int AS n FROM payment_intent_transitions GROUP BY 1, 2 HAVING COUNT(*) > 1',
    );
    expect(transitions.rows).toEqual([]);
    const deliveries = await db.pool.query('SELECT event_id, COUNT(*)::int AS n FROM webhook_deliveries GROUP BY 1 HAVING COUNT(*) > 1');
    expect(deliveries.rows).toEqual([]);
    const byId = new Map<string, number>();
    for (const e of receiver.events) byId.set(e.id, (byId.get(e.id) ?? 0) + 1);
    expect([...byId.values()].every((n) => n === 1)).toBe(true);
    expect(byId.size).toBe(PAYMENTS * 4); // created, broadcasting, broadcasted, settled
    const jobs = await db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute' AND retry_count > 0");
    expect(jobs.rows[0].n).toBe(0);

    for (const p of processes) p.child.kill('SIGTERM');
    for (const p of processes) expect(await p.exited).toBe(0);
    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: db.url });
    expect(verify.code).toBe(0);
  });
});
