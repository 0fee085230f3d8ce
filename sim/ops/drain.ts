// The calm after the faults: time moves on and every worker runs, round after round, while the operators do what a
// payment waits for them to do (approve what waits for approval, resolve what is in manual review, queue failed
// webhook events again), until every payment is final and every event delivered, or the rounds run out.
import { OPEN_STATUSES } from '../../src/domain/payment-intent.js';
import { RESOLUTIONS } from '../../src/domain/operator-actions.js';
import { advance } from '../outside/clock.js';
import { SIM_SETTINGS } from '../world.js';
import type { OpEnv } from './env.js';
import { decideApproval, redeliver, resolve } from './operator.js';
import { confirmOp, deadLetterOp, executionOp, scanOp, sweepOp, webhooksOp } from './workers.js';

const DRAIN_ROUNDS_MAX = 150;

/** Null once drained; otherwise what is left. */
export async function drain(env: OpEnv, log: (kind: string, did: string) => void, check: () => Promise<void>): Promise<string | null> {
  const { world } = env;
  for (let round = 0; round < DRAIN_ROUNDS_MAX; round++) {
    // Transfers from outside first: a return books a refund, whose event must then be delivered too.
    log('scan', await scanOp(env));
    const { rows } = await world.pool.query<{ open: number; review: number; waiting: number; events: number; failed: number }>(
      `SELECT (SELECT COUNT(*) FROM payment_intents WHERE status = ANY($1::text[]))::int AS open,
              (SELECT COUNT(*) FROM payment_intents WHERE status = 'manual_review')::int AS review,
              (SELECT COUNT(*) FROM payment_approvals WHERE status = 'pending')::int AS waiting,
              (SELECT COUNT(*) FROM webhook_events WHERE status = 'pending')::int AS events,
              (SELECT COUNT(*) FROM webhook_events WHERE status = 'failed')::int AS failed`,
      [OPEN_STATUSES],
    );
    const left = rows[0]!;
    if (left.open === 0 && left.events === 0 && left.failed === 0) return null;
    const draws = [round, round >> 1, 0, 0];
    for (let i = 0; i < left.waiting; i++) log('approval', await decideApproval(env, [0, 1, 0, 0]));
    // An operator tries the resolutions in turn, the chain decides which one it accepts.
    if (left.review > 0) log('resolve', await resolve(env, draws, RESOLUTIONS[round % RESOLUTIONS.length]!));
    for (let i = 0; i < left.failed; i++) log('redeliver', await redeliver(env, [0, 0, 0, 0]));
    log('sweep', await sweepOp(env, draws));
    log('dead_letters', await deadLetterOp(env));
    for (let i = 0; i < 10; i++) {
      const did = await executionOp(env, draws);
      log('execute', did);
      if (did === 'executed 0') break;
    }
    log('confirm', await confirmOp(env, draws));
    log('webhooks', await webhooksOp(env));
    const seconds = round % 20 === 19 ? SIM_SETTINGS.stuckAfterSeconds + 1 : SIM_SETTINGS.executionLeaseSeconds + 1;
    await advance(world, seconds);
    log('advance', `clock +${seconds}s`);
    await check();
  }
  const { rows } = await world.pool.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents WHERE status = ANY($1::text[]) LIMIT 5', [OPEN_STATUSES]);
  const events = await world.pool.query<{ id: string; status: string }>("SELECT id, status FROM webhook_events WHERE status <> 'delivered' LIMIT 5");
  return `after ${DRAIN_ROUNDS_MAX} rounds: payments ${JSON.stringify(rows)}, events ${JSON.stringify(events.rows)}`;
}
