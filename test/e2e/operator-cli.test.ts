// The operator CLI as operators run it: `stableroute intents resolve|cancel` as a child process on a test database
// whose payments a test context created. Exit codes 0 ok, 1 refused, 2 usage; --json output; a refused command
// changes nothing; the money moves as the ledger says it must.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { runCommand } from '../helpers/process.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
let env: Record<string, string>;
// Every simulated transfer the node takes sticks (never confirms) until a test says otherwise.
const SIM = { SIM_STUCK_RATE: '1', SIM_TREASURY_USDC: '1000' };

beforeAll(async () => {
  t = await createTestContext({ ...SIM, STUCK_AFTER_SECONDS: '60' });
  env = { DATABASE_URL: t.db.url, ...SIM };
});
afterAll(async () => t.close());

const intents = (...args: string[]) => runCommand(['intents', ...args], env);

let keys = 0;
/** A payment of `amount` USDC on Solana, funds reserved, in route_selected. */
async function createIntent(amount: number): Promise<string> {
  const quote = await t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: amount, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' } });
  expect(quote.statusCode).toBe(201);
  const res = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quote.json().quote_id, idempotency_key: `cli-${++keys}` } });
  expect(res.statusCode).toBe(201);
  expect(res.json().status).toBe('route_selected');
  return res.json().payment_intent_id as string;
}

/** Broadcast; the (stuck) transfer is live on the simulated chain. */
async function broadcastIntent(amount: number): Promise<string> {
  const id = await createIntent(amount);
  await drainExecution(t);
  expect((await read(id)).status).toBe('broadcasted');
  return id;
}

/** Broadcast and left unconfirmed past STUCK_AFTER_SECONDS: manual_review. */
async function stuckIntent(amount: number): Promise<string> {
  const id = await broadcastIntent(amount);
  t.clock.advance(61_000);
  await confirm(t);
  expect((await read(id)).status).toBe('manual_review');
  return id;
}

const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();

async function solanaBalance(): Promise<{ available: number; reserved: number }> {
  const overview = (await t.app.inject({ method: 'GET', url: '/admin/overview' })).json();
  const b = overview.treasury_balances.find((x: { chain: string }) => x.chain === 'solana');
  return { available: b.available_balance, reserved: b.reserved_balance };
}

async function txIdOf(id: string): Promise<string> {
  const { rows } = await t.db.pool.query<{ tx_id: string }>('SELECT tx_id FROM payment_attempts WHERE payment_intent_id = $1', [id]);
  expect(rows).toHaveLength(1);
  return rows[0]!.tx_id;
}

/** Everything an operator command could change about a payment, and the books. */
async function everything(id: string) {
  const q = async (sql: string, params: unknown[] = [id]) => (await t.db.pool.query(sql, params)).rows;
  return {
    intent: await q('SELECT status, updated_at FROM payment_intents WHERE id = $1'),
    transitions: await q('SELECT to_status FROM payment_intent_transitions WHERE payment_intent_id = $1 ORDER BY id'),
    attempts: await q('SELECT id, status, failure_reason, actual_fee_native, confirmed_at FROM payment_attempts WHERE payment_intent_id = $1 ORDER BY created_at, id'),
    ledger: await q('SELECT id, type FROM ledger_transactions WHERE payment_intent_id = $1 ORDER BY id'),
    events: await q('SELECT event_type FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq'),
    accounts: await q('SELECT chain, currency, kind, stripe, balance::text FROM ledger_accounts ORDER BY chain, currency, kind, stripe', []),
  };
}

async function ledgerVerifies(): Promise<void> {
  const verify = await runCommand(['ledger', 'verify', '--json'], env);
  expect(verify.stderr).toBe('');
  expect(verify.code).toBe(0);
  expect(JSON.parse(verify.stdout.trim().split('\n').pop()!)).toMatchObject({ ok: true, problems: [] });
}

const lastJson = (stdout: string) => JSON.parse(stdout.trim().split('\n').pop()!);
const types = (intent: { ledger_entries: { type: string }[] }) => intent.ledger_entries.map((e) => e.type);

describe('stableroute intents: usage', () => {
  it('exits 2 with the usage on stderr for a malformed command, and touches nothing', async () => {
    const id = await stuckIntent(3);
    const before = await everything(id);
    const cases = [
      ['intents'],
      ['intents', 'resolve', id],
      ['intents', 'resolve', '--failed'],
      ['intents', 'resolve', id, '--settled', '--failed'],
      ['intents', 'cancel', id, '--failed'],
      ['intents', 'settle', id],
    ];
    const results = await Promise.all(cases.map((args) => runCommand(args, env)));
    for (const [i, res] of results.entries()) {
      expect({ args: cases[i], code: res.code, stdout: res.stdout }).toEqual({ args: cases[i], code: 2, stdout: '' });
      expect(res.stderr).toMatch(/usage: stableroute intents/);
    }
    expect(await everything(id)).toEqual(before);
  });

  it('exits 2 for a mistyped flag: a usage error, not a refusal by the service (exit 1)', async () => {
    const id = await stuckIntent(2);
    const before = await everything(id);
    const res = await intents('resolve', id, '--fialed');
    expect({ code: res.code, stdout: res.stdout }).toEqual({ code: 2, stdout: '' });
    expect(res.stderr).toMatch(/--fialed/);
    expect(await everything(id)).toEqual(before);
  });

  it('exits 1 for an unknown payment intent', async () => {
    const [resolve, cancel] = await Promise.all([intents('resolve', 'pi_doesnotexist', '--failed', '--json'), intents('cancel', 'pi_doesnotexist')]);
    expect(resolve.code).toBe(1);
    expect(resolve.stdout).toBe('');
    expect(resolve.stderr).toContain('PAYMENT_INTENT_NOT_FOUND');
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('PAYMENT_INTENT_NOT_FOUND');
  });
});

describe('stableroute intents resolve', () => {
  it('refuses (exit 1) a payment that is not in manual_review, --force or not, and changes nothing', async () => {
    const live = await broadcastIntent(4);
    const before = await everything(live);
    const attempts = [
      ['resolve', live, '--failed', '--json'],
      ['resolve', live, '--failed', '--force'],
      ['resolve', live, '--settled', '--json'],
      ['resolve', live, '--replace'],
    ];
    const results = await Promise.all(attempts.map((args) => intents(...args)));
    for (const [i, res] of results.entries()) {
      expect({ args: attempts[i], code: res.code }).toEqual({ args: attempts[i], code: 1 });
      expect(res.stderr).toContain('INVALID_STATE');
      expect(res.stdout).not.toMatch(/"status"\s*:\s*"(failed|settled)"/);
    }
    expect(await everything(live)).toEqual(before);
  });

  it('--failed on a transfer the chain no longer knows: refused until the chain proves it can never land; then exit 0, funds released', async () => {
    const id = await stuckIntent(25);
    const txId = await txIdOf(id);
    // The node dropped the transaction: it has no record of these bytes at all. Sent again they may still land.
    await t.db.pool.query('DELETE FROM sim_transactions WHERE tx_id = $1', [txId]);
    await t.db.pool.query('DELETE FROM sim_broadcast_tries WHERE tx_id = $1', [txId]);
    const unchanged = await everything(id);
    const refused = await intents('resolve', id, '--failed', '--json');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('TRANSFER_MAY_STILL_LAND');
    expect(await everything(id)).toEqual(unchanged);
    // The node refuses the bytes for good now: they can provably never land (the simulator's 'expired').
    await t.db.pool.query("INSERT INTO sim_broadcast_tries (tx_id, tries, refused_reason) VALUES ($1, 1, 'insufficient_gas')", [txId]);
    const balance = await solanaBalance();

    const res = await intents('resolve', id, '--failed', '--json');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(lastJson(res.stdout)).toEqual({ payment_intent_id: id, status: 'failed', tx_id: txId });

    const intent = await read(id);
    expect(intent.status).toBe('failed');
    expect(types(intent)).toEqual(['reserve', 'debit', 'release']);
    expect(intent.ledger_entries.find((e: { type: string }) => e.type === 'release')).toMatchObject({ amount: 25, currency: 'USDC', chain: 'solana' });
    expect(intent.attempts).toHaveLength(1);
    expect(intent.attempts[0]).toMatchObject({ tx_id: txId, failure_reason: 'operator_failed' });
    expect(intent.attempts[0].status).not.toBe('broadcasted');
    expect(await solanaBalance()).toEqual({ available: balance.available + 25, reserved: balance.reserved - 25 });
    const events = await t.db.pool.query<{ event_type: string }>('SELECT event_type FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq', [id]);
    expect(events.rows.map((e) => e.event_type).at(-1)).toBe('payment.failed');
    await ledgerVerifies();

    // Resolved once: a second resolution is refused and changes nothing.
    const before = await everything(id);
    const again = await intents('resolve', id, '--failed');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('INVALID_STATE');
    expect(await everything(id)).toEqual(before);
  });

  it('--failed while the chain reports the transfer pending is refused unless --force', async () => {
    const id = await stuckIntent(30);
    const txId = await txIdOf(id);
    const before = await everything(id);
    const balance = await solanaBalance();

    const refused = await intents('resolve', id, '--failed', '--json');
    expect(refused.code).toBe(1);
    expect(refused.stdout).not.toMatch(/"status"\s*:\s*"failed"/);
    expect(refused.stderr).toContain('INVALID_STATE');
    expect(await everything(id)).toEqual(before);

    // Forced, it is only requested (decision 181): nothing moves until another operator approves it; the CLI that
    // asked is not that operator.
    const forced = await intents('resolve', id, '--failed', '--force', '--json');
    expect(forced.stderr).toBe('');
    expect(forced.code).toBe(0);
    expect(lastJson(forced.stdout)).toEqual({ payment_intent_id: id, status: 'manual_review', tx_id: txId, approval: 'pending' });
    expect(types(await read(id))).toEqual(['reserve', 'debit']);
    const self = await intents('approve', id, '--json');
    expect([self.code, self.stderr]).toEqual([1, expect.stringContaining('SELF_APPROVAL')]);
    const approved = await t.app.inject({ method: 'POST', url: `/admin/payment_intents/${id}/approve`, payload: {} });
    expect(approved.json()).toMatchObject({ payment_intent_id: id, status: 'failed', approval: 'approved' });
    expect(types(await read(id))).toEqual(['reserve', 'debit', 'release']);
    expect(await solanaBalance()).toEqual({ available: balance.available + 30, reserved: balance.reserved - 30 });
    await ledgerVerifies();
  });

  it('--settled once the chain has the transfer final: exit 0, settled with the debit and the actual fee in the ledger', async () => {
    const id = await stuckIntent(40);
    const txId = await txIdOf(id);
    // The transfer finally went through on chain (the CLI runs on the wall clock, long after the test clock).
    const landed = await t.db.pool.query<{ fee_native: string; final_at: Date }>(
      'UPDATE sim_transactions SET will_stick = false WHERE tx_id = $1 RETURNING fee_native::text, final_at',
      [txId],
    );
    expect(landed.rows).toHaveLength(1);
    expect(Date.now()).toBeGreaterThan(landed.rows[0]!.final_at.getTime());
    const feeSol = Number(landed.rows[0]!.fee_native) / 1e9;
    expect(feeSol).toBeGreaterThan(0);
    const balance = await solanaBalance();

    const res = await intents('resolve', id, '--settled');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout.trim()).toBe(`${id}: settled (tx ${txId})`);

    const intent = await read(id);
    expect(intent.status).toBe('settled');
    expect(types(intent)).toEqual(['reserve', 'debit', 'fee']);
    expect(intent.ledger_entries.find((e: { type: string }) => e.type === 'debit')).toMatchObject({ amount: 40, currency: 'USDC', chain: 'solana' });
    expect(intent.ledger_entries.find((e: { type: string }) => e.type === 'fee')).toMatchObject({ amount: feeSol, currency: 'SOL', chain: 'solana' });
    expect(intent.attempts[0]).toMatchObject({ tx_id: txId, status: 'confirmed', actual_fee_native: feeSol });
    // The payout left the treasury: nothing comes back to available, the reservation is gone.
    expect(await solanaBalance()).toEqual({ available: balance.available, reserved: balance.reserved - 40 });
    const events = await t.db.pool.query<{ event_type: string }>('SELECT event_type FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq', [id]);
    expect(events.rows.map((e) => e.event_type).at(-1)).toBe('payment.settled');
    await ledgerVerifies();
  });

  it('--replace and --cancel-on-chain on a chain that can do neither are refused and change nothing', async () => {
    const id = await stuckIntent(5);
    const before = await everything(id);
    for (const flag of ['--replace', '--cancel-on-chain']) {
      const res = await intents('resolve', id, flag, '--json');
      expect(res.code).toBe(1);
      expect(res.stderr).toContain('INVALID_STATE');
    }
    expect(await everything(id)).toEqual(before);
  });
});

describe('stableroute intents cancel', () => {
  it('cancels a payment in route_selected: exit 0, JSON result, reservation released, nothing is ever sent', async () => {
    const id = await createIntent(12);
    const balance = await solanaBalance();
    const res = await intents('cancel', id, '--json');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(lastJson(res.stdout)).toEqual({ payment_intent_id: id, status: 'cancelled', tx_id: null });

    const intent = await read(id);
    expect(intent.status).toBe('cancelled');
    expect(types(intent)).toEqual(['reserve', 'release']);
    expect(await solanaBalance()).toEqual({ available: balance.available + 12, reserved: balance.reserved - 12 });
    // The execution job queued at creation finds nothing to do.
    await drainExecution(t);
    expect((await read(id)).attempts).toEqual([]);
    await ledgerVerifies();

    const before = await everything(id);
    const again = await intents('cancel', id);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('INVALID_STATE');
    expect(await everything(id)).toEqual(before);
  });

  it('refuses (exit 1) once a transfer is live, broadcast or in manual review, and changes nothing', async () => {
    const stuck = await stuckIntent(8);
    const live = await broadcastIntent(7);
    for (const id of [live, stuck]) {
      const before = await everything(id);
      const res = await intents('cancel', id, '--json');
      expect(res.code).toBe(1);
      expect(res.stdout).not.toMatch(/"status"\s*:\s*"cancelled"/);
      expect(res.stderr).toContain('INVALID_STATE');
      expect(await everything(id)).toEqual(before);
    }
  });
});
