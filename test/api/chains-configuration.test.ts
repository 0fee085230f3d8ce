// Chains are configuration (issue 27): a service with CHAINS=ethereum,solana,base,polygon, every chain simulated,
// quotes, pays out and books on each of them, and its API (validation and the OpenAPI document) lists exactly them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { recordExternalTransfers } from '../../src/chains/simulated/external-transfer.js';
import { ConfigError } from '../../src/config.js';
import { scanDeposits } from '../../src/core/treasury/deposits/scan.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { refuseRemovedChains } from '../../src/core/treasury/treasury.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const BASE_ADDRESS = '0x8ba1f109551bD432803012645Ac136ddd64DBA72';
const POLYGON_ADDRESS = '0xdD2FD4581271e230360230F9337D5c0430Bf44C0';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ CHAINS: 'ethereum,solana,base,polygon', SIM_CONFIRM_SECONDS: '10', SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

const quote = (destination: Record<string, string>, priority = 'low_fee') =>
  t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 25, destination, priority } });

async function pay(destination: Record<string, string>, key: string): Promise<string> {
  const q = await quote(destination);
  expect(q.statusCode).toBe(201);
  const created = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: q.json().quote_id, idempotency_key: key } });
  expect(created.statusCode).toBe(201);
  return created.json().payment_intent_id as string;
}

describe('a service configured with four chains', () => {
  it('scores every chain the merchant named an address for, and no other', async () => {
    const all = await quote({ ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS, base_address: BASE_ADDRESS, polygon_address: POLYGON_ADDRESS });
    expect(all.statusCode).toBe(201);
    expect(all.json().candidate_routes.map((r: { chain: string }) => r.chain).sort()).toEqual(['base', 'ethereum', 'polygon', 'solana']);

    const baseOnly = await quote({ base_address: BASE_ADDRESS });
    expect(baseOnly.json().candidate_routes.map((r: { chain: string }) => r.chain)).toEqual(['base']);
    expect(baseOnly.json().recommended_route).toBe('base');
  });

  it('refuses a destination only on a chain it does not pay out on, and a bad address on one it does', async () => {
    const unknown = await quote({ arbitrum_address: BASE_ADDRESS });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().code).toBe('MISSING_DESTINATION');
    expect(unknown.json().message).toBe(
      'destination.ethereum_address, destination.solana_address, destination.base_address or destination.polygon_address is required',
    );
    const bad = await quote({ polygon_address: SOL_ADDRESS });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('INVALID_DESTINATION');
  });

  it('publishes the configured chains as the enum of every chain field', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.components.schemas.Chain.enum).toEqual(['ethereum', 'solana', 'base', 'polygon']);
    const destination = doc.paths['/quotes'].post.requestBody.content['application/json'].schema.properties.destination;
    expect(Object.keys(destination.properties)).toEqual(['ethereum_address', 'solana_address', 'base_address', 'polygon_address']);

    const refused = await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'arbitrum', health_status: 'healthy' } });
    expect(refused.statusCode).toBe(400);
    const accepted = await t.app.inject({ method: 'POST', url: '/admin/chain-health', payload: { chain: 'polygon', health_status: 'healthy' } });
    expect(accepted.statusCode).toBe(201);
  });

  let onBase: string;
  it('pays out on base and polygon, each fee booked in its own native currency, and the books prove it', async () => {
    onBase = await pay({ base_address: BASE_ADDRESS }, 'chains-base');
    const onPolygon = await pay({ polygon_address: POLYGON_ADDRESS }, 'chains-polygon');
    await drainExecution(t);
    t.clock.advance(11_000);
    await confirm(t);
    for (const [id, chain, currency] of [[onBase, 'base', 'ETH'], [onPolygon, 'polygon', 'POL']] as const) {
      const intent = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
      expect(intent).toMatchObject({ status: 'settled', selected_chain: chain, destination_address: chain === 'base' ? BASE_ADDRESS : POLYGON_ADDRESS });
      const record = (await t.app.inject({ method: 'GET', url: `/admin/payments/${id}` })).json();
      expect(record.attempts[0]).toMatchObject({ chain, fee_currency: currency });
    }
    const { rows } = await t.db.pool.query<{ chain: string; currency: string }>(
      "SELECT DISTINCT chain, currency FROM ledger_accounts WHERE kind = 'network_fees' ORDER BY chain",
    );
    expect(rows).toEqual([
      { chain: 'base', currency: 'ETH' },
      { chain: 'polygon', currency: 'POL' },
    ]);
    const report = await verifyLedger(t.db.pool);
    expect(report.ok).toBe(true);
    const results = await reconcile(t.db.pool, t.ctx.adapters);
    expect(results.map((r) => [r.chain, r.status]).sort()).toEqual([
      ['base', 'ok'],
      ['ethereum', 'ok'],
      ['polygon', 'ok'],
      ['solana', 'ok'],
    ]);
  });

  it('books a return on base from the payout address in any case, as on Ethereum: EVM addresses ignore case', async () => {
    const treasury = t.ctx.adapters.base!.treasuryAddress();
    await recordExternalTransfers(t.db.pool, t.ctx.config.simSeed, [
      { chain: 'base', from: BASE_ADDRESS.toLowerCase(), to: treasury, currency: 'USDC', amountUnits: 25_000_000n, at: t.clock.now() },
    ]);
    await scanDeposits({ ...t.ctx, log: pino({ level: 'silent' }) });
    const { rows } = await t.db.pool.query<{ payment_intent_id: string | null; match_status: string }>(
      "SELECT payment_intent_id, match_status FROM inbound_transfers WHERE chain = 'base' AND currency = 'USDC'",
    );
    expect(rows).toEqual([{ payment_intent_id: onBase, match_status: 'matched' }]);
  });

  it('refuses a withdrawal on a chain it does not pay out on', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload: { chain: 'arbitrum', to: BASE_ADDRESS, amount_usdc: '1', idempotency_key: 'w-arb' } });
    expect(res.statusCode).toBe(400);
  });

  it('refuses to start without a chain that still holds funds, naming it', async () => {
    await expect(refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base', 'polygon'])).resolves.toEqual([]);
    const refusal = refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base']);
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base'])).rejects.toThrow(/^CHAINS: polygon is not listed .* still holds 975(\.0+)? USDC/);
  });

  it('lets a chain with only gas left go, answering its gas for the warning', async () => {
    const drained = await t.app.inject({
      method: 'POST',
      url: '/admin/withdrawals',
      payload: { chain: 'polygon', to: POLYGON_ADDRESS, amount_usdc: '975', idempotency_key: 'drain-polygon' },
    });
    expect(drained.statusCode).toBe(201);
    await drainExecution(t);
    t.clock.advance(11_000);
    await confirm(t);
    const left = await refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base']);
    expect(left.map((l) => l.chain)).toEqual(['polygon']);
    expect(left[0]!.nativeUnits).toBeGreaterThan(0n);
  });
});

describe('adding a chain to a running installation', () => {
  it('is a restart with a longer CHAINS: the new chain gets its treasury and pays out; the old payments stay', async () => {
    const before = await createTestContext({ SIM_CONFIRM_SECONDS: '10' });
    try {
      const q = await before.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 5, destination: { base_address: BASE_ADDRESS }, priority: 'fast' } });
      expect(q.statusCode).toBe(400); // base is not paid out on yet: its field is not a destination
      const earlier = await createPayment(before.app, 5);
      const after = await createTestContext({ CHAINS: 'ethereum,solana,base', SIM_CONFIRM_SECONDS: '10' }, { database: before.db });
      try {
        const quoted = await after.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: { amount_usd: 5, destination: { base_address: BASE_ADDRESS }, priority: 'fast' } });
        expect(quoted.statusCode).toBe(201);
        const created = await after.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quoted.json().quote_id, idempotency_key: 'added-base' } });
        expect(created.statusCode).toBe(201);
        await drainExecution(after);
        after.clock.advance(11_000);
        await confirm(after);
        const intent = (await after.app.inject({ method: 'GET', url: `/payment_intents/${created.json().payment_intent_id}`, headers: KEY })).json();
        expect(intent).toMatchObject({ status: 'settled', selected_chain: 'base' });
        const old = await after.app.inject({ method: 'GET', url: `/payment_intents/${earlier}`, headers: KEY });
        expect(old.json()).toMatchObject({ id: earlier, selected_chain: 'solana' });
        expect((await verifyLedger(after.db.pool)).ok).toBe(true);
      } finally {
        await after.close();
      }
    } finally {
      await before.close();
    }
  });
});
