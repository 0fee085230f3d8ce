// The operators' calls, through app.inject() on the admin routes: approve or reject a payment waiting for approval,
// cancel one not on chain yet, resolve one in manual review (settled, failed, replace, retry, cancel_on_chain), queue
// a failed webhook event again, withdraw from a treasury. A refusal (4xx, or 502 when the chain cannot be asked) is an
// answer like any other; a 500 is a bug.
import { RESOLUTIONS } from '../../src/domain/operator-actions.js';
import { expectNoServerError, type OpEnv } from './env.js';
import { chosen, inRunOrder, remember } from './model.js';

async function idsWhere(env: OpEnv, sql: string, params: unknown[] = []): Promise<string[]> {
  const { rows } = await env.world.pool.query<{ id: string }>(sql, params);
  return inRunOrder(env.model, rows.map((r) => r.id));
}

export async function decideApproval(env: OpEnv, draws: readonly number[]): Promise<string> {
  const waiting = await idsWhere(env, "SELECT payment_intent_id AS id FROM payment_approvals WHERE status = 'pending'");
  const id = chosen(waiting, draws[0]!);
  if (!id) return 'nothing waits for approval';
  const action = draws[1]! % 4 === 0 ? 'reject' : 'approve';
  // A payment of a payout batch held whole (decision 178) is decided with its batch.
  const batch = await env.world.pool.query<{ payout_batch_id: string | null }>('SELECT payout_batch_id FROM payment_approvals WHERE payment_intent_id = $1', [id]);
  const batchId = batch.rows[0]?.payout_batch_id ?? null;
  const url = batchId === null ? `/admin/payment_intents/${id}/${action}` : `/admin/payout_batches/${batchId}/${action}`;
  const res = await env.world.app.inject({ method: 'POST', url, payload: {} });
  expectNoServerError(env, `${action} ${id}`, res);
  env.touched.add(id);
  return `${action} #${env.model.byId.get(id)?.index}: ${res.statusCode}${res.statusCode >= 400 ? ` ${(res.json() as { code?: string }).code}` : ''}`;
}

export async function cancel(env: OpEnv, draws: readonly number[]): Promise<string> {
  // Half the time the operator goes for a payment that had trouble (retrying: a send that failed or timed out, maybe
  // after the node took it), the cancel that must be refused while its transfer can still land.
  const troubled = draws[1]! % 2 === 0;
  const open = await idsWhere(env, `SELECT id FROM payment_intents WHERE status IN ('retrying'${troubled ? '' : ", 'route_selected'"})`);
  const id = chosen(open, draws[0]!);
  if (!id) return 'nothing to cancel';
  const res = await env.world.app.inject({ method: 'POST', url: `/admin/payments/${id}/cancel` });
  expectNoServerError(env, `cancel ${id}`, res, [502]);
  env.touched.add(id);
  return `cancel #${env.model.byId.get(id)?.index}: ${res.statusCode}`;
}

export async function resolve(env: OpEnv, draws: readonly number[], resolution = RESOLUTIONS[draws[1]! % RESOLUTIONS.length]!): Promise<string> {
  const review = await idsWhere(env, "SELECT id FROM payment_intents WHERE status = 'manual_review'");
  const id = chosen(review, draws[0]!);
  if (!id) return 'nothing in manual review';
  const res = await env.world.app.inject({ method: 'POST', url: `/admin/payments/${id}/resolve`, payload: { resolution } });
  expectNoServerError(env, `resolve ${id} ${resolution}`, res, [502]);
  env.touched.add(id);
  return `resolve #${env.model.byId.get(id)?.index} ${resolution}: ${res.statusCode}${res.statusCode >= 400 ? ` ${res.json().code}` : ''}`;
}

export async function redeliver(env: OpEnv, draws: readonly number[]): Promise<string> {
  const { rows } = await env.world.pool.query<{ id: string }>("SELECT id FROM webhook_events WHERE status = 'failed' ORDER BY seq");
  const event = chosen(rows, draws[0]!);
  if (!event) return 'no failed event';
  const res = await env.world.app.inject({ method: 'POST', url: `/admin/webhook-events/${event.id}/redeliver` });
  expectNoServerError(env, `redeliver ${event.id}`, res);
  return `redeliver: ${res.statusCode}`;
}

export async function withdraw(env: OpEnv, draws: readonly number[]): Promise<string> {
  const chain = draws[0]! % 2 === 0 ? ('ethereum' as const) : ('solana' as const);
  const to = env.world.recipients[chain][draws[1]! % env.world.recipients[chain].length]!;
  const amount = (1 + (draws[2]! % 500_000) / 100).toFixed(2);
  const res = await env.world.app.inject({
    method: 'POST',
    url: '/admin/withdrawals',
    payload: { chain, to, amount_usdc: amount, idempotency_key: `sim-wd-${++env.model.names}` },
  });
  expectNoServerError(env, 'POST /admin/withdrawals', res);
  if (res.statusCode !== 201) return `withdrawal refused ${res.json().code}`;
  const id = (res.json() as { id: string }).id;
  remember(env.model, { id, kind: 'withdrawal', amountMicros: BigInt(Math.round(Number(amount) * 100)) * 10_000n });
  env.touched.add(id);
  return `withdrawal ${amount} on ${chain}`;
}
