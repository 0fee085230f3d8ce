// The merchants' calls, through app.inject() so that validation, idempotency and errors are the service's own: quotes,
// payment intents, replays of a key (with the same body and with another), payout batches.
import type { Chain } from '../../src/domain/chain.js';
import { expectNoServerError, InvariantBroken, isUnavailableAfterFaults, metDatabaseFault, type OpEnv } from './env.js';
import { chosen, remember } from './model.js';

const KEY = { 'x-api-key': 'test-key' };
const PRIORITIES = ['low_fee', 'fast', 'reliable'] as const;
/** Quotes the simulator holds at most; the oldest are dropped (left to expire). */
const HELD_QUOTES_MAX = 40;

/** An amount in USD from a draw: mostly small, sometimes above the approval threshold. */
export function amountOf(draw: number): number {
  // Now and then exactly the threshold (SIM_SETTINGS.approvalAboveUsd), which must not be held.
  if (draw % 40 === 7) return 2000;
  const cents = draw % 1000 === 0 ? 200_000 + (draw % 300_000) : 100 + (draw % 50_000);
  return cents / 100;
}

function destinationOf(env: OpEnv, draw: number): { ethereum_address?: string; solana_address?: string } {
  const { ethereum, solana } = env.world.recipients;
  const which = draw % 4;
  const eth = ethereum[Math.floor(draw / 4) % ethereum.length]!;
  const sol = solana[Math.floor(draw / 4) % solana.length]!;
  return which === 0 ? { ethereum_address: eth } : which === 1 ? { solana_address: sol } : { ethereum_address: eth, solana_address: sol };
}

export async function quote(env: OpEnv, draws: readonly number[]): Promise<string> {
  const amountUsd = amountOf(draws[0]!);
  const res = await env.world.app.inject({
    method: 'POST',
    url: '/quotes',
    headers: KEY,
    payload: { amount_usd: amountUsd, destination: destinationOf(env, draws[1]!), priority: PRIORITIES[draws[2]! % 3] },
  });
  expectNoServerError(env, 'POST /quotes', res);
  if (res.statusCode !== 201) return `refused ${res.json().code}`;
  const body = res.json() as { quote_id: string; recommended_route?: string };
  env.model.quotes.push({ id: body.quote_id, amountUsd, chain: (body.recommended_route as Chain | undefined) ?? null });
  if (env.model.quotes.length > HELD_QUOTES_MAX) env.model.quotes.shift();
  return `quote ${amountUsd} USD`;
}

async function postIntent(env: OpEnv, quoteId: string, key: string) {
  const res = await env.world.app.inject({ method: 'POST', url: '/payment_intents', headers: KEY, payload: { quote_id: quoteId, idempotency_key: key } });
  expectNoServerError(env, 'POST /payment_intents', res);
  return res;
}

/**
 * The splitter merchant (world.splitter) pays one payout of 100 to 500 USD: a quote and its payment intent at once.
 * Under its limit per day on what leaves without approval, the payouts that would bring the last 24 hours above it
 * wait for an operator however small each is (held_for_approval_iff_above_threshold checks it exactly).
 */
export async function splitPayout(env: OpEnv, draws: readonly number[]): Promise<string> {
  const headers = { 'x-api-key': env.world.splitter.apiKey };
  const amountUsd = 100 + (draws[0]! % 40_000) / 100;
  const quoted = await env.world.app.inject({ method: 'POST', url: '/quotes', headers, payload: { amount_usd: amountUsd, destination: destinationOf(env, draws[1]!), priority: PRIORITIES[draws[2]! % 3] } });
  expectNoServerError(env, 'POST /quotes (splitter)', quoted);
  if (quoted.statusCode !== 201) return `splitter quote refused ${quoted.json().code}`;
  const quoteId = (quoted.json() as { quote_id: string }).quote_id;
  const res = await env.world.app.inject({ method: 'POST', url: '/payment_intents', headers, payload: { quote_id: quoteId, idempotency_key: `sim-split-${++env.model.names}` } });
  expectNoServerError(env, 'POST /payment_intents (splitter)', res);
  if (res.statusCode !== 201) return `splitter refused ${res.json().code}`;
  const id = (res.json() as { payment_intent_id: string }).payment_intent_id;
  remember(env.model, { id, kind: 'payment', amountMicros: BigInt(Math.round(amountUsd * 100)) * 10_000n });
  env.touched.add(id);
  return `splitter created #${env.model.byId.get(id)!.index} (${amountUsd} USD)`;
}

export async function createIntent(env: OpEnv, draws: readonly number[]): Promise<string> {
  // One creation in four is the splitter merchant's (its own quote), so the operation sequence of a seed stays the same.
  if (Math.floor(draws[3]! / 7) % 4 === 0) return splitPayout(env, draws);
  const quoted = env.model.quotes.length === 0 ? await quote(env, draws) : '';
  const held = chosen(env.model.quotes, draws[3]!);
  if (!held) return `no quote (${quoted})`;
  const key = `sim-${++env.model.names}`;
  const res = await postIntent(env, held.id, key);
  if (res.statusCode !== 201 && res.statusCode !== 200) return `refused ${res.json().code}`;
  const body = res.json() as { payment_intent_id: string; amount_usd: number };
  remember(env.model, { id: body.payment_intent_id, kind: 'payment', amountMicros: BigInt(Math.round(held.amountUsd * 100)) * 10_000n });
  env.model.keys.push({ key, quoteId: held.id, paymentId: body.payment_intent_id });
  env.touched.add(body.payment_intent_id);
  return `created #${env.model.byId.get(body.payment_intent_id)!.index}`;
}

/** The same key again: with the same body it must answer the same payment; with another quote, never a new payment. */
export async function replay(env: OpEnv, draws: readonly number[], sameBody: boolean): Promise<string> {
  const use = chosen(env.model.keys, draws[0]!);
  if (!use) return 'no key';
  const other = chosen(env.model.quotes, draws[1]!);
  const quoteId = sameBody || !other || other.id === use.quoteId ? use.quoteId : other.id;
  const res = await postIntent(env, quoteId, use.key);
  if (res.statusCode === 200 || res.statusCode === 201) {
    const id = (res.json() as { payment_intent_id: string }).payment_intent_id;
    if (id !== use.paymentId) throw new InvariantBroken('replay_returns_same_payment', `key ${use.key} answered ${id}, first ${use.paymentId}`);
    return `replayed #${env.model.byId.get(id)?.index}`;
  }
  if (quoteId === use.quoteId && !(res.statusCode >= 500 && metDatabaseFault(env)) && !isUnavailableAfterFaults(env, res)) throw new InvariantBroken('replay_returns_same_payment', `key ${use.key} with its own body answered ${res.statusCode} ${res.body}`);
  return `refused ${res.json().code}`;
}

export async function payoutBatch(env: OpEnv, draws: readonly number[]): Promise<string> {
  const size = 1 + (draws[0]! % 5);
  const batchKey = `sim-batch-${++env.model.names}`;
  const items = Array.from({ length: size }, (_, i) => ({
    idempotency_key: `${batchKey}-${i}`,
    amount_usd: amountOf(draws[1]! + i * 7919),
    destination: destinationOf(env, draws[2]! + i),
    priority: PRIORITIES[(draws[3]! + i) % 3],
  }));
  const res = await env.world.app.inject({ method: 'POST', url: '/payout_batches', headers: KEY, payload: { idempotency_key: batchKey, items } });
  expectNoServerError(env, 'POST /payout_batches', res);
  if (res.statusCode !== 201) return `refused ${res.json().code}`;
  const body = res.json() as { items: { result: string; payment_intent?: { payment_intent_id: string; amount_usd: number } }[] };
  let created = 0;
  for (const item of body.items) {
    if (item.result !== 'created' || !item.payment_intent) continue;
    remember(env.model, { id: item.payment_intent.payment_intent_id, kind: 'payment', amountMicros: BigInt(Math.round(item.payment_intent.amount_usd * 1e6)) });
    env.touched.add(item.payment_intent.payment_intent_id);
    created++;
  }
  return `batch of ${size}: ${created} created`;
}
