import { afterEach, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, KEY, SOL_ADDRESS, ETH_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
afterEach(async () => t?.close());

let keys = 0;
async function pay(amount: number, destination: object, key = `k-${++keys}`) {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: amount, destination, priority: 'fast' } });
  const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: key } });
  expect(res.statusCode).toBe(201);
  return res.json().payment_intent_id as string;
}

const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
const events = async (id: string) =>
  (await t.db.pool.query('SELECT event_type, payload FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq', [id])).rows;
const history = async (id: string) =>
  (await t.db.pool.query('SELECT to_status FROM payment_intent_transitions WHERE payment_intent_id = $1 ORDER BY id', [id])).rows.map((r) => r.to_status);
const solana = async () =>
  (await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().treasury_balances.find((b: { chain: string }) => b.chain === 'solana');

describe('a payment on the simulated chains', () => {
  it('goes route_selected -> broadcasting -> broadcasted -> pending_confirmation -> settled with every entry and event', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
    const id = await pay(12.345678, { solana_address: SOL_ADDRESS });
    expect(await drainExecution(t)).toBe(1);
    let intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts).toHaveLength(1);
    expect(intent.attempts[0]).toMatchObject({ id: expect.stringMatching(/^att_/), chain: 'solana', status: 'broadcasted', broadcast_at: '2026-03-01T12:00:00.000Z' });
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit']);

    t.clock.advance(5_000); // included, not final (Solana: ~1 s to confirmed, ~13 s to finalized)
    await confirm(t);
    expect((await read(id)).status).toBe('pending_confirmation');
    expect((await solana()).reserved_balance).toBe(12.345678);

    t.clock.advance(10_000);
    expect((await confirm(t)).settled).toBe(1);
    intent = await read(id);
    expect(intent.status).toBe('settled');
    expect(intent.attempts[0].status).toBe('confirmed');
    expect(intent.attempts[0].confirmed_at).toBe('2026-03-01T12:00:15.000Z');
    expect(intent.attempts[0].actual_fee_native).toBeGreaterThan(0);
    expect(intent.ledger_entries).toEqual([
      expect.objectContaining({ type: 'reserve', amount: 12.345678, currency: 'USDC', chain: 'solana' }),
      expect.objectContaining({ type: 'debit', amount: 12.345678, currency: 'USDC', chain: 'solana' }),
      expect.objectContaining({ type: 'fee', amount: intent.attempts[0].actual_fee_native, currency: 'SOL', chain: 'solana' }),
    ]);
    const balance = await solana();
    expect(balance.available_balance).toBe(1000 - 12.345678);
    expect(balance.reserved_balance).toBe(0);
    expect(await history(id)).toEqual(['created', 'quoted', 'route_selected', 'broadcasting', 'broadcasted', 'pending_confirmation', 'settled']);
    const sent = await events(id);
    expect(sent.map((e) => e.event_type)).toEqual(['payment.created', 'payment.broadcasting', 'payment.broadcasted', 'payment.settled']);
    expect(sent[3]!.payload).toMatchObject({
      amount_usd: 12.345678,
      selected_chain: 'solana',
      destination_address: SOL_ADDRESS,
      tx_id: intent.attempts[0].tx_id,
      status: 'settled',
      confirmed_at: '2026-03-01T12:00:15.000Z',
    });
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
    // A second run of the same job, or a late duplicate, changes nothing.
    await t.ctx.boss.send('payment-execute', { payment_intent_id: id, attempt: 1 });
    await drainExecution(t);
    expect((await read(id)).attempts).toHaveLength(1);
  });

  it('fails for good after 3 broadcast attempts: release, funds back, payment.failed, /admin/failures', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000', SIM_FAILURE_RATE: '1', EXECUTION_RETRY_DELAY_SECONDS: '5', SIM_SEED: 'fail-seed' });
    const ids = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => pay(n, { ethereum_address: ETH_ADDRESS })));
    await drainExecution(t);
    // Every retry waited the documented backoff: 5 s after the first failure, 10 s after the second. pg-boss re-runs
    // a crashed run after the same first delay.
    const delays = await t.db.pool.query<{ attempt: number; delay: number; retry_delay: number }>(
      `SELECT (data->>'attempt')::int AS attempt, EXTRACT(EPOCH FROM start_after - created_on)::float8 AS delay, retry_delay
         FROM pgboss.job WHERE name = 'payment-execute' AND (data->>'attempt')::int > 1`,
    );
    expect(delays.rows.length).toBeGreaterThan(0);
    for (const row of delays.rows) {
      expect(row.delay).toBe(row.attempt === 2 ? 5 : 10);
      expect(row.retry_delay).toBe(5);
    }
    t.clock.advance(10 * 60_000 + 1_000); // past the stuck threshold
    await confirm(t);
    // Every send fails; the seed decides how. A refusal ends an attempt; a timeout leaves it unknown, and half of
    // those reached the node anyway. After the third attempt, an intent whose last send was refused fails with its
    // funds released; one whose last send timed out keeps its funds reserved and is watched: the chain settles it if
    // the bytes landed, and the stuck threshold sends it to manual review if not.
    const outcomes = [];
    for (const id of ids) {
      const intent = await read(id);
      const types = intent.ledger_entries.map((e: { type: string }) => e.type);
      // Attempts signed at one clock instant list in id order; the live one is the one not failed.
      const attempts: { status: string; failure_reason: string | null }[] = intent.attempts;
      const live = attempts.filter((a) => a.status !== 'failed');
      const lastEvent = (await events(id)).at(-1)!;
      expect(attempts.every((a) => a.failure_reason !== null)).toBe(true);
      expect(attempts.length).toBeGreaterThanOrEqual(1);
      expect(attempts.length).toBeLessThanOrEqual(3);
      if (intent.status === 'failed') {
        expect(types).toEqual(['reserve', 'debit', 'release']);
        expect(live).toEqual([]);
        // Refused at its last send, or found expired by the confirmation worker (a refused re-send of bytes whose
        // first send timed out proves nothing until the chain says so: then it is 'dropped').
        expect(['insufficient_gas', 'nonce_conflict', 'dropped']).toContain(lastEvent.payload.failure_reason);
        expect(lastEvent.event_type).toBe('payment.failed');
      } else if (intent.status === 'settled') {
        expect(types).toEqual(['reserve', 'debit', 'fee']);
        expect(live).toEqual([expect.objectContaining({ status: 'confirmed', failure_reason: 'rpc_timeout' })]);
        expect(lastEvent.event_type).toBe('payment.settled');
      } else {
        expect(intent.status).toBe('manual_review');
        expect(types).toEqual(['reserve', 'debit']);
        expect(live).toEqual([expect.objectContaining({ status: 'broadcasted', failure_reason: 'rpc_timeout' })]);
        expect(lastEvent.event_type).toBe('payment.manual_review');
      }
      outcomes.push(intent.status);
    }
    // The seed is fixed, so the outcomes are too: a change here means the retry rules changed.
    expect(outcomes.sort()).toEqual(['failed', 'failed', 'failed', 'failed', 'failed', 'manual_review']);
    const failed = (await t.db.pool.query("SELECT COUNT(*)::int AS n FROM payment_intents WHERE status = 'failed'")).rows[0].n;
    expect(failed).toBeGreaterThan(0);
    const failures = (await t.app.inject({ method: 'GET', url: '/admin/failures' })).json();
    expect(failures.length).toBeGreaterThan(0);
    for (const row of failures) {
      expect(['insufficient_gas', 'rpc_timeout', 'nonce_conflict', 'dropped']).toContain(row.failure_reason);
      expect(row.chain).toBe('ethereum');
      expect(row.count).toMatch(/^\d+$/);
    }
    const dead = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM pgboss.job WHERE name = 'payment-execute-dead'");
    expect(dead.rows[0].n).toBeGreaterThan(0);
    const report = await verifyLedger(t.db.pool);
    expect(report.problems).toEqual([]);
    const eth = (await t.app.inject({ method: 'GET', url: '/admin/overview' })).json().treasury_balances.find((b: { chain: string }) => b.chain === 'ethereum');
    const open = (await t.db.pool.query("SELECT COALESCE(SUM(amount_micros), 0)::int AS n FROM payment_intents WHERE status NOT IN ('failed', 'settled')")).rows[0].n;
    expect(eth.reserved_balance).toBe(open / 1e6);
  });

  it('a transfer that never confirms goes to manual_review after STUCK_AFTER_SECONDS, funds stay reserved', async () => {
    t = await createTestContext({ SIM_TREASURY_USDC: '1000', SIM_STUCK_RATE: '1', STUCK_AFTER_SECONDS: '600' });
    const id = await pay(7, { solana_address: SOL_ADDRESS });
    await drainExecution(t);
    t.clock.advance(599_000);
    await confirm(t);
    expect((await read(id)).status).toBe('broadcasted');
    t.clock.advance(2_000);
    expect((await confirm(t)).manualReview).toBe(1);
    expect((await read(id)).status).toBe('manual_review');
    expect((await events(id)).at(-1)).toMatchObject({ event_type: 'payment.manual_review', payload: { status: 'manual_review' } });
    expect((await solana()).reserved_balance).toBe(7);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });
});
