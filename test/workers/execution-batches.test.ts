// Execution steps in batches. The locked re-check of a signature batch, in two statements for the whole batch
// (recheck.ts): each payment is answered as its run left it (still broadcasting, the run holding its lease, nothing
// signed yet), or CHANGED, in the order the runs asked; the batch's attempts are written in one INSERT. A claim batch
// (claim.ts) claims its payments in one transaction and answers every run as a claim alone would.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PreparedTransfer } from '../../src/chains/port.js';
import { claimRuns } from '../../src/core/payments/execute/claim.js';
import { signTransfers } from '../../src/core/payments/execute/sign.js';
import { transferRequestOf } from '../../src/core/payments/outcomes/sign-attempts.js';
import { readIntent } from '../../src/db/queries/intents.js';
import { lockForRecheck } from '../../src/core/payments/execute/recheck.js';
import { CHANGED } from '../../src/core/payments/outcomes/changed.js';
import { withTransaction, type Queryable } from '../../src/db/pool.js';
import { insertAttempts } from '../../src/db/queries/attempts.js';
import { upsertLeases } from '../../src/db/queries/leases.js';
import { isAsLeft } from '../../src/domain/execution.js';
import { createPayment, createTestContext, type TestContext } from '../helpers/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000' });
});
afterAll(async () => t.close());

/** A payment some run is executing: broadcasting, its lease held by `owner`. */
async function executing(owner: string): Promise<string> {
  const id = await createPayment(t.app, 2);
  await t.db.pool.query("UPDATE payment_intents SET status = 'broadcasting' WHERE id = $1", [id]);
  await upsertLeases(t.db.pool, [{ intentId: id, owner, attempt: 1, seconds: 30, takeovers: 0 }]);
  return id;
}

/** What a signature batch's re-check answers each run: its payment, or CHANGED. */
async function recheckToSign(tx: Queryable, runs: { runId: string; intentId: string }[]) {
  const locked = await lockForRecheck(tx, runs.map((r) => ({ job: { payment_intent_id: r.intentId, attempt: 1 }, runId: r.runId })), { lockAttempts: false });
  return locked.map(({ intent, facts }) => (intent && isAsLeft(facts, null) ? intent : CHANGED));
}

const attempt = (id: string, intent: string) => ({
  id,
  payment_intent_id: intent,
  chain: 'solana' as const,
  estimated_fee_usd: 0.01,
  created_at: new Date(),
  tx_payments: 1,
  tx_payment_index: 0,
  signed: { txId: `tx-${id}`, rawTx: `raw-${id}`, meta: { slot: 1 } },
});

describe('a signature batch', () => {
  it('answers each run as it left its payment, or CHANGED, in the order asked', async () => {
    const ready = await executing('run-ready');
    const takenOver = await executing('run-other');
    const signed = await executing('run-signed');
    await insertAttempts(t.db.pool, [attempt('att_signed', signed)]);
    const notBroadcasting = await createPayment(t.app, 2); // still route_selected
    await upsertLeases(t.db.pool, [{ intentId: notBroadcasting, owner: 'run-early', attempt: 1, seconds: 30, takeovers: 0 }]);

    const answers = await withTransaction(t.db.pool, (tx) =>
      recheckToSign(tx, [
        { runId: 'run-signed', intentId: signed },
        { runId: 'run-ready', intentId: ready },
        { runId: 'run-presumed-dead', intentId: takenOver },
        { runId: 'run-early', intentId: notBroadcasting },
        { runId: 'run-ghost', intentId: 'pi_does_not_exist' },
      ]),
    );
    expect(answers.map((a) => (a === CHANGED ? CHANGED : a.id))).toEqual([CHANGED, ready, CHANGED, CHANGED, CHANGED]);
  });

  it('writes its attempts in one statement, each as signed, with its bytes and metadata', async () => {
    const a = await executing('run-a');
    const b = await executing('run-b');
    await insertAttempts(t.db.pool, [attempt('att_a', a), attempt('att_b', b)]);
    const { rows } = await t.db.pool.query(
      'SELECT id, payment_intent_id, status, tx_id, signed_tx, chain_meta, estimated_fee_usd FROM payment_attempts WHERE id = ANY($1) ORDER BY id',
      [['att_a', 'att_b']],
    );
    expect(rows).toEqual([
      { id: 'att_a', payment_intent_id: a, status: 'signed', tx_id: 'tx-att_a', signed_tx: 'raw-att_a', chain_meta: { slot: 1 }, estimated_fee_usd: 0.01 },
      { id: 'att_b', payment_intent_id: b, status: 'signed', tx_id: 'tx-att_b', signed_tx: 'raw-att_b', chain_meta: { slot: 1 }, estimated_fee_usd: 0.01 },
    ]);
    // The batch re-check now finds both signed: a second signature of either would be refused.
    const answers = await withTransaction(t.db.pool, (tx) =>
      recheckToSign(tx, [
        { runId: 'run-a', intentId: a },
        { runId: 'run-b', intentId: b },
      ]),
    );
    expect(answers).toEqual([CHANGED, CHANGED]);
  });
});

describe('the signature of an on-chain batch', () => {
  it('signs a transaction for all of its payments or for none: one moved, the others are not signed either', async () => {
    const deps = { ...t.ctx, log: pino({ level: 'silent' }) };
    const sign = async (owners: { id: string; runId: string }[]) => {
      const intents = await Promise.all(owners.map(async ({ id }) => (await readIntent(t.db.pool, id))!));
      const prepared = await t.ctx.adapters.solana!.prepareTransfers(intents.map(transferRequestOf));
      expect(new Set(prepared).size).toBe(1); // one transaction pays them all
      return signTransfers(
        deps,
        owners.map(({ id, runId }, k) => ({ run: { job: { payment_intent_id: id, attempt: 1 }, runId }, intent: intents[k]!, prepared: prepared[k] as PreparedTransfer })),
      );
    };
    const [a, b] = [await executing('run-a'), await executing('run-b')];
    // b's run was presumed dead and another took its lease over: b is no longer as its run left it.
    const moved = await sign([
      { id: a, runId: 'run-a' },
      { id: b, runId: 'run-presumed-dead' },
    ]);
    expect(moved.map((o) => (o.ok ? o.value : o.error))).toEqual([CHANGED, CHANGED]);
    expect((await t.db.pool.query('SELECT COUNT(*)::int AS n FROM payment_attempts WHERE payment_intent_id = ANY($1)', [[a, b]])).rows[0].n).toBe(0);

    const signed = await sign([
      { id: a, runId: 'run-a' },
      { id: b, runId: 'run-b' },
    ]);
    const txIds = signed.map((o) => (o.ok && typeof o.value === 'object' ? o.value.transfer.txId : null));
    expect(txIds[0]).not.toBeNull();
    expect(txIds[1]).toBe(txIds[0]);
  });
});

describe('a claim batch', () => {
  it('claims its payments in one transaction and answers every run as a claim alone would', async () => {
    const [a, b, twice, stale] = [await createPayment(t.app, 1), await createPayment(t.app, 1), await createPayment(t.app, 1), await createPayment(t.app, 1)];
    const deps = { ...t.ctx, log: pino({ level: 'silent' }) };
    const run = (id: string, runId: string, attempt = 1) => ({ job: { payment_intent_id: id, attempt }, runId });
    const answers = await claimRuns(deps, [
      run(a, 'run-a'),
      run(b, 'run-b'),
      run(twice, 'run-first'),
      run(twice, 'run-second'),
      run(stale, 'run-stale', 2),
      run('pi_does_not_exist', 'run-ghost'),
    ]);
    const summary = answers.map((x) => {
      if (!x.ok) throw x.error;
      return x.value.kind === 'done' ? x.value.why : `${x.value.intent.id} ${x.value.intent.status} live=${x.value.live?.id ?? null}`;
    });
    expect(summary).toEqual([
      `${a} broadcasting live=null`,
      `${b} broadcasting live=null`,
      `${twice} broadcasting live=null`,
      'another run holds the execution lease',
      'job of attempt 2; the intent is at attempt 1',
      'unknown intent',
    ]);
    const { rows } = await t.db.pool.query(
      `SELECT i.id, i.status, l.owner,
              (SELECT COUNT(*)::int FROM webhook_events e WHERE e.payment_intent_id = i.id AND e.event_type = 'payment.broadcasting') AS events,
              (SELECT COUNT(*)::int FROM payment_intent_transitions h WHERE h.payment_intent_id = i.id AND h.to_status = 'broadcasting') AS moves
         FROM payment_intents i LEFT JOIN execution_leases l ON l.payment_intent_id = i.id WHERE i.id = ANY($1) ORDER BY i.created_at`,
      [[a, b, twice, stale]],
    );
    expect(rows).toEqual([
      { id: a, status: 'broadcasting', owner: 'run-a', events: 1, moves: 1 },
      { id: b, status: 'broadcasting', owner: 'run-b', events: 1, moves: 1 },
      { id: twice, status: 'broadcasting', owner: 'run-first', events: 1, moves: 1 },
      { id: stale, status: 'route_selected', owner: null, events: 0, moves: 0 },
    ]);
  });
});
