// An operator's resolution of a stuck payment under each database fault, at each moment of it: the operator sees an
// outage and asks again, as anyone would. Whatever the first request did, the payment is resolved once (settled once,
// its transfer confirmed once), the ledger verifies and the audit chain holds.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAudit } from '../../src/core/operators/audit-verify.js';
import { resolveManualReview, type Resolution } from '../../src/core/operators/transitions/resolve.js';
import { isDatabaseUnavailable } from '../../src/db/outage.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { wrapPool } from '../../sim/faults/db.js';
import { noFaults, type FaultKind, type FaultPlan } from '../../sim/faults/plan.js';
import { Rng } from '../../sim/rng.js';
import { testAudit } from '../helpers/audit.js';
import { createPayment, createTestContext, ETH_ADDRESS, type TestContext } from '../helpers/context.js';
import { confirm, drainExecution } from '../helpers/workers.js';

const quiet = pino({ level: 'silent' });
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '100000', SIM_STUCK_RATE: '1', STUCK_AFTER_SECONDS: '60' });
});
afterAll(async () => t?.close());

function scripted(kind: FaultKind, at: number): FaultPlan & { rolls: Map<FaultKind, number> } {
  const rolls = new Map<FaultKind, number>();
  const counts = new Map<FaultKind, number>();
  return {
    ...noFaults(),
    calm: false,
    counts,
    rolls,
    roll(k) {
      const n = (rolls.get(k) ?? 0) + 1;
      rolls.set(k, n);
      const hit = k === kind && n === at;
      if (hit) counts.set(k, 1);
      return hit;
    },
  };
}

/** An Ethereum payment whose transfer never lands, in manual review. */
async function stuck(): Promise<string> {
  const id = await createPayment(t.app, 2, { ethereum_address: ETH_ADDRESS });
  await drainExecution(t);
  t.clock.advance(61_000);
  await confirm(t);
  return id;
}

/** The operator's request on a faulty pool, asked again (on a clean one) when it failed as an outage. */
async function resolveAsAnOperator(plan: FaultPlan, id: string, resolution: Resolution): Promise<{ first: unknown; again: unknown }> {
  const faulty = { ...t.ctx, log: quiet, pool: wrapPool(t.ctx.pool, plan, new Rng(`${id}`)) };
  const first = await resolveManualReview(faulty, id, resolution, { audit: testAudit('payment.resolve') }).catch((error: unknown) => error);
  if (!isDatabaseUnavailable(first)) return { first, again: null };
  const again = await resolveManualReview({ ...t.ctx, log: quiet }, id, resolution, { audit: testAudit('payment.resolve') }).catch((error: unknown) => error);
  return { first, again };
}

const attemptsOf = async (id: string) =>
  (await t.db.pool.query<{ status: string; tx_id: string }>('SELECT status, tx_id FROM payment_attempts WHERE payment_intent_id = $1 ORDER BY created_at', [id])).rows;
const statusOf = async (id: string) => (await t.db.pool.query<{ status: string }>('SELECT status FROM payment_intents WHERE id = $1', [id])).rows[0]!.status;

// The simulated chains have no fee replacement nor cancel on chain: an outside check's settlement is what they allow.
const CASES: [FaultKind, Resolution][] = [
  ['db.ambiguous_commit', 'settled'],
  ['db.connection_lost', 'settled'],
  ['db.pool_exhausted', 'settled'],
];

describe('an operator resolution under database faults', () => {
  it.each(CASES)('%s during %s', { timeout: 300_000 }, async (kind, resolution) => {
    const dry = scripted(kind, 0);
    const dryId = await stuck();
    await resolveAsAnOperator(dry, dryId, resolution);
    const moments = dry.rolls.get(kind) ?? 0;
    expect(moments).toBeGreaterThan(0);
    const problems: string[] = [];
    for (let at = 1; at <= moments; at++) {
      const id = await stuck();
      const plan = scripted(kind, at);
      const { first, again } = await resolveAsAnOperator(plan, id, resolution);
      expect(plan.counts.get(kind), `${kind}@${at}`).toBe(1);
      const outcome = again ?? first;
      const attempts = await attemptsOf(id);
      const status = await statusOf(id);
      const ok = status === 'settled' && attempts.length === 1 && attempts[0]!.status === 'confirmed';
      if (!ok) problems.push(`${kind}@${at}: ${status} ${JSON.stringify(attempts)} first=${String(first)} again=${String(outcome)}`);
    }
    expect(problems).toEqual([]);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
    expect((await verifyAudit({ pool: t.db.pool, config: t.ctx.config }, [])).ok).toBe(true);
  });
});
