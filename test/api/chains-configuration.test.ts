// Chains are configuration (issue 27): a service with CHAINS=ethereum,solana,base,polygon, every chain simulated,
// quotes, pays out and books on each of them, and its API (validation and the OpenAPI document) lists exactly them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { reconcile } from '../../src/core/reconcile.js';
import { refuseRemovedChains } from '../../src/core/treasury.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
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

  it('pays out on base and polygon, each fee booked in its own native currency, and the books prove it', async () => {
    const onBase = await pay({ base_address: BASE_ADDRESS }, 'chains-base');
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

  it('refuses a withdrawal on a chain it does not pay out on', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload: { chain: 'arbitrum', to: BASE_ADDRESS, amount_usdc: '1', idempotency_key: 'w-arb' } });
    expect(res.statusCode).toBe(400);
  });

  it('refuses to start without a chain that still holds funds, naming it', async () => {
    await expect(refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base', 'polygon'])).resolves.toBeUndefined();
    const refusal = refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base']);
    await expect(refusal).rejects.toBeInstanceOf(ConfigError);
    await expect(refuseRemovedChains(t.db.pool, ['ethereum', 'solana', 'base'])).rejects.toThrow(/^CHAINS: polygon is not listed .* still holds 975(\.0+)? USDC/);
  });
});
