// Quotes that name the tokens a recipient accepts (issue 40): each route names and is priced by its token, the
// payment pays it, its ledger entries book it, and the books and the chains agree per (chain, token). A quote that
// names no token is the spec's, field for field.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { ensureTreasuries } from '../../src/core/treasury/treasury.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import { tokensOfConfig } from '../../src/config.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestContext, ETH_ADDRESS, KEY, SOL_ADDRESS, type TestContext } from '../helpers/context.js';
import { testAudit } from '../helpers/audit.js';
import { confirm, drainExecution } from '../helpers/workers.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000', ETHEREUM_TOKENS: 'usdc,usdt', SOLANA_TOKENS: 'usdc,usdt,pyusd', SIM_CONFIRM_SECONDS: '4' });
});
afterAll(async () => t.close());

const both = { ethereum_address: ETH_ADDRESS, solana_address: SOL_ADDRESS };
const quote = (body: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/quotes', headers: KEY, payload: body });

describe('POST /quotes with tokens', () => {
  it('201 without tokens: exactly the spec fields, routes without a token, one per chain', async () => {
    const res = await quote({ amount_usd: 10, destination: both, priority: 'low_fee' });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json()).sort()).toEqual(['amount_usd', 'candidate_routes', 'expires_at', 'quote_id', 'recommended_route']);
    for (const route of res.json().candidate_routes) {
      expect(Object.keys(route).sort()).toEqual(['chain', 'estimated_fee_usd', 'estimated_settlement_seconds', 'final_score', 'reliability_score']);
    }
    expect(res.json().candidate_routes).toHaveLength(2);
  });

  it('201: a route per (chain, token) accepted and paid there, each priced by its own gas; recommended_token named', async () => {
    const res = await quote({ amount_usd: 10, destination: both, priority: 'low_fee', tokens: ['usdt', 'pyusd'] });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    const routes = (body.candidate_routes as { chain: string; token: string; estimated_fee_usd: number }[]).map((r) => `${r.chain}:${r.token}`).sort();
    // Ethereum does not pay PYUSD here: no route for it.
    expect(routes).toEqual(['ethereum:usdt', 'solana:pyusd', 'solana:usdt']);
    expect(body.recommended_route).toBe('solana');
    expect(['usdt', 'pyusd']).toContain(body.recommended_token);
    const usdc = (await quote({ amount_usd: 10, destination: { ethereum_address: ETH_ADDRESS }, priority: 'low_fee', tokens: ['usdc'] })).json();
    const usdt = (await quote({ amount_usd: 10, destination: { ethereum_address: ETH_ADDRESS }, priority: 'low_fee', tokens: ['usdt'] })).json();
    expect(usdt.candidate_routes[0].estimated_fee_usd).toBeGreaterThan(usdc.candidate_routes[0].estimated_fee_usd);
    expect(usdc.recommended_token).toBe('usdc');
  });

  it('400 INVALID_TOKEN: an unknown token, one no chain pays, or none; in the spec error format', async () => {
    for (const tokens of [['eurc'], ['usdc', 'dai'], [], 'usdt']) {
      const res = await quote({ amount_usd: 10, destination: both, priority: 'low_fee', tokens });
      expect(res.statusCode, JSON.stringify(tokens)).toBe(400);
      expect(res.json()).toMatchObject({ statusCode: 400, error: 'Bad Request', code: 'INVALID_TOKEN' });
      expect(typeof res.json().message).toBe('string');
    }
  });

  it('a USDT payout settles with its entries in USDT; ledger verify and reconcile are clean for every (chain, token)', async () => {
    const q = await quote({ amount_usd: 12.5, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast', tokens: ['usdt'] });
    expect(q.json()).toMatchObject({ recommended_route: 'ethereum', recommended_token: 'usdt' });
    const created = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: q.json().quote_id, idempotency_key: 'usdt-1' } });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ selected_chain: 'ethereum', token: 'usdt', status: 'route_selected' });
    const id = created.json().payment_intent_id as string;
    await drainExecution(t);
    t.clock.advance(10_000);
    await confirm(t);
    const read = (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();
    expect(read).toMatchObject({ status: 'settled', token: 'usdt' });
    const entries = read.ledger_entries as { type: string; amount: number; currency: string }[];
    expect(entries.filter((e) => e.type !== 'fee').map((e) => [e.type, e.amount, e.currency])).toEqual([
      ['reserve', 12.5, 'USDT'],
      ['debit', 12.5, 'USDT'],
    ]);
    expect(entries.find((e) => e.type === 'fee')?.currency).toBe('ETH');
    // Its webhooks name the token; the settled one's payload keeps every field the spec lists.
    const events = await t.db.pool.query<{ event_type: string; payload: Record<string, unknown> }>(
      'SELECT event_type, payload FROM webhook_events WHERE payment_intent_id = $1 ORDER BY seq',
      [id],
    );
    expect(events.rows.map((e) => e.event_type)).toContain('payment.settled');
    for (const event of events.rows) expect(event.payload.token, event.event_type).toBe('usdt');
    expect(events.rows.find((e) => e.event_type === 'payment.settled')!.payload).toMatchObject({ amount_usd: 12.5, selected_chain: 'ethereum', status: 'settled' });
    // The treasury's USDC is untouched; its USDT paid the payout.
    expect(await t.ctx.adapters.ethereum!.treasuryTokenBalance('usdt')).toBe(1000_000_000n - 12_500_000n);
    expect(await t.ctx.adapters.ethereum!.treasuryTokenBalance('usdc')).toBe(1000_000_000n);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    const report = await reconcile(t.db.pool, t.ctx.adapters, tokensOfConfig(t.ctx.config));
    expect(report.map((r) => [r.chain, r.token ?? 'usdc', r.status]).sort()).toEqual([
      ['ethereum', 'usdc', 'ok'],
      ['ethereum', 'usdt', 'ok'],
      ['solana', 'pyusd', 'ok'],
      ['solana', 'usdc', 'ok'],
      ['solana', 'usdt', 'ok'],
    ]);
    // A USDC payment of the same merchant still reads as the spec's, with no token field.
    const usdcQuote = await quote({ amount_usd: 1, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' });
    const usdcCreated = await t.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: usdcQuote.json().quote_id, idempotency_key: 'usdc-1' } });
    expect(usdcCreated.json()).not.toHaveProperty('token');
  });

  it('400 INSUFFICIENT_BALANCE names the token: a treasury short of USDT is not saved by its USDC', async () => {
    const res = await quote({ amount_usd: 999, destination: { ethereum_address: ETH_ADDRESS }, priority: 'fast', tokens: ['usdt'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('INSUFFICIENT_BALANCE');
  });

  it('a withdrawal names its token: it reserves and settles that token only; an unconfigured one is 400 INVALID_TOKEN', async () => {
    const withdraw = (payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url: '/admin/withdrawals', payload });
    const refused = await withdraw({ chain: 'ethereum', to: ETH_ADDRESS, amount_usdc: '1', token: 'pyusd' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().code).toBe('INVALID_TOKEN');
    const created = await withdraw({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '3', token: 'pyusd', idempotency_key: 'wd-pyusd' });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ token: 'pyusd', amount_usdc: '3' });
    await drainExecution(t);
    t.clock.advance(10_000);
    await confirm(t);
    expect(await t.ctx.adapters.solana!.treasuryTokenBalance('pyusd')).toBe(1000_000_000n - 3_000_000n);
    const withdrawn = await t.db.pool.query<{ currency: string; balance: string }>(
      "SELECT currency, balance::text FROM ledger_accounts WHERE chain = 'solana' AND kind = 'withdrawals' AND balance <> 0",
    );
    expect(withdrawn.rows).toEqual([{ currency: 'PYUSD', balance: '3000000' }]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });
});

describe('policies stay per payment, in USD across tokens (issue 40 item 4)', () => {
  it('a daily limit counts USDT and USDC payments together', async () => {
    const { merchant, apiKey } = await createMerchant(t.db.pool, t.ctx.config, { name: 'two tokens', webhookUrl: null }, t.clock.now(), testAudit());
    await updateMerchantPolicy(t.db.pool, t.ctx.config, merchant.id, { dailyLimitMicros: 100_000_000n }, t.clock.now(), testAudit());
    const headers = { 'x-api-key': apiKey };
    const pay = async (amount: number, tokens: string[] | undefined, key: string) => {
      const q = await t.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: amount, destination: both, priority: 'fast', ...(tokens ? { tokens } : {}) } });
      expect(q.statusCode, q.body).toBe(201);
      return t.app.inject({ method: 'POST', url: '/payment_intents', headers, payload: { quote_id: q.json().quote_id, idempotency_key: key } });
    };
    const usdt = await pay(60, ['usdt'], 'limit-usdt');
    expect(usdt.statusCode).toBe(201);
    expect(usdt.json().token).toBe('usdt');
    expect((await pay(40, undefined, 'limit-usdc')).statusCode).toBe(201);
    const over = await pay(0.01, ['usdt', 'usdc'], 'limit-over');
    expect(over.statusCode).toBe(422);
    expect(over.json().code).toBe('POLICY_DAILY_LIMIT_EXCEEDED');
  });

  it('a token added to a funded treasury refuses the start: its recent deposits would be booked twice (decision 238)', async () => {
    // Ethereum's books hold usdc and usdt; its simulated wallet holds PYUSD too, which the books never held.
    await expect(ensureTreasuries(t.db.pool, t.ctx.adapters, t.clock.now(), () => ['usdc', 'usdt', 'pyusd'])).rejects.toThrow(
      /ETHEREUM_TOKENS: pyusd is listed for ethereum, whose treasury already holds 1000(\.0+)? PYUSD/,
    );
    const { rows } = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM ledger_accounts WHERE chain = 'ethereum' AND currency = 'PYUSD'");
    expect(rows[0].n).toBe(0);
    expect((await verifyLedger(t.db.pool)).ok).toBe(true);
  });
});

