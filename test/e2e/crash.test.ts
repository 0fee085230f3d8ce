// kill -9 of the service with transfers in flight: after a restart every intent reaches a final state, no intent
// is paid twice, every intent has at most one debit, and `stableroute ledger verify` passes. Half the payments come in
// one payout batch, so on-chain batches (several payments in one transaction, refused whole now and then by the
// simulated node's failures and split) are in flight when the service dies.
import { describe, expect, it } from 'vitest';
import { freePort, runCommand, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { serviceFixture } from '../helpers/service-fixture.js';

const SECRET = 'e2e-secret';
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const ETH = '0x52908400098527886E0F7030069857D2E4169EE7';

const fx = serviceFixture(SECRET);
let service: ServiceProcess | undefined;

function env(port: number): Record<string, string> {
  return {
    DATABASE_URL: fx.db.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    WEBHOOK_SIGNING_SECRET: SECRET,
    DEV_MERCHANT_WEBHOOK_URL: fx.receiver.url,
    SIM_CONFIRM_SECONDS: '1.5',
    SIM_FAILURE_RATE: '0.3',
    SIM_SEED: 'crash-test',
    CONFIRMATION_POLL_SECONDS: '0.2',
    WEBHOOK_POLL_SECONDS: '0.2',
    WEBHOOK_RETRY_DELAY_SECONDS: '0.2',
    EXECUTION_RETRY_DELAY_SECONDS: '0.2',
    EXECUTION_JOB_TIMEOUT_SECONDS: '2',
    HEALTH_COLLECT_SECONDS: '1',
    STUCK_AFTER_SECONDS: '120',
  };
}

describe('crash safety', () => {
  it('kill -9 with transfers in flight, restart: every intent final, one payout at most, ledger verifies', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = fx.start(['serve'], env(port));
    await waitHealthy(base, service);

    const ids: string[] = [];
    for (let i = 0; i < 24; i++) {
      const destination = i % 2 ? { solana_address: SOL } : { ethereum_address: ETH };
      const quote = await fetch(`${base}/quotes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
        body: JSON.stringify({ amount_usd: 10 + i, destination, priority: 'fast' }),
      }).then((r) => r.json() as Promise<{ quote_id: string }>);
      const intent = await fetch(`${base}/payment_intents`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
        body: JSON.stringify({ quote_id: quote.quote_id, idempotency_key: `crash-${i}` }),
      });
      expect(intent.status, await intent.clone().text()).toBe(201);
      ids.push(((await intent.json()) as { payment_intent_id: string }).payment_intent_id);
    }
    const payroll = await fetch(`${base}/payout_batches`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'dev' },
      body: JSON.stringify({
        idempotency_key: 'crash-payroll',
        items: Array.from({ length: 24 }, (_, i) => ({
          idempotency_key: `crash-payroll-${i}`,
          amount_usd: 5 + i,
          priority: 'fast',
          destination: i % 2 ? { solana_address: SOL } : { ethereum_address: ETH },
        })),
      }),
    });
    expect(payroll.status, await payroll.clone().text()).toBe(201);
    ids.push(...((await payroll.json()) as { items: { payment_intent: { payment_intent_id: string } }[] }).items.map((item) => item.payment_intent.payment_intent_id));
    // Kill while work is in flight: some broadcast, none of them all final yet.
    await waitFor('some transfers in flight', async () => {
      const { rows } = await fx.db.pool.query("SELECT COUNT(*)::int AS n FROM payment_attempts WHERE status = 'broadcasted'");
      return rows[0].n >= 3;
    });
    service.child.kill('SIGKILL');
    await service.exited;

    service = fx.start(['serve'], env(port));
    await waitHealthy(base, service);
    await waitFor(
      'every intent final',
      async () => {
        const { rows } = await fx.db.pool.query("SELECT COUNT(*)::int AS n FROM payment_intents WHERE status NOT IN ('settled', 'failed')");
        return rows[0].n === 0;
      },
      60_000,
      200,
    );

    const payouts = await fx.db.pool.query<{ ref: string; n: number }>(
      "SELECT ref, COUNT(*)::int AS n FROM sim_payouts GROUP BY 1",
    );
    for (const row of payouts.rows) expect(row.n, `payouts of ${row.ref}`).toBe(1);
    const intents = await fx.db.pool.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents');
    const paid = new Set(payouts.rows.map((r) => r.ref));
    for (const intent of intents.rows) {
      if (intent.status === 'settled') expect(paid.has(intent.id)).toBe(true);
      else expect(paid.has(intent.id), `failed ${intent.id} must not have been paid`).toBe(false);
    }
    // On-chain batches were part of it: transactions that paid several payments.
    const shared = await fx.db.pool.query("SELECT COUNT(DISTINCT tx_id)::int AS n FROM payment_attempts WHERE tx_payments > 1");
    expect(shared.rows[0].n).toBeGreaterThan(0);
    const debits = await fx.db.pool.query("SELECT payment_intent_id, COUNT(*)::int AS n FROM ledger_transactions WHERE type = 'debit' GROUP BY 1");
    for (const row of debits.rows) expect(row.n).toBe(1);
    expect(intents.rows.filter((r) => r.status === 'settled').length).toBeGreaterThan(0);

    // Every settled intent's merchant heard about it, with a valid signature.
    await waitFor('settled webhooks', async () => {
      const settled = new Set(fx.receiver.events.filter((e) => e.event_type === 'payment.settled').map((e) => e.payment_intent_id));
      return intents.rows.filter((r) => r.status === 'settled').every((r) => settled.has(r.id));
    });
    expect(fx.receiver.badSignatures).toBe(0);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const verify = await runCommand(['ledger', 'verify'], { DATABASE_URL: fx.db.url });
    expect(verify.stdout).toContain('OK');
    expect(verify.code).toBe(0);
  });
});
