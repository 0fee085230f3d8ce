// A chain's signing held after the database history changed (issue 36, decisions 198-200), on the simulated chains:
// the signing transaction itself refuses (a claim made before the failover signs nothing after it), the job comes back
// later instead of failing; a check finds the simulated chain trivially matched (its state lives in the books'
// database) and signing resumes; the operator's actions on a chain the books are behind are checked against the
// check's findings and a foreign declaration takes two different operators.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBooks } from '../../src/core/treasury/books/check.js';
import { attachUnknownTransaction, declareForeign } from '../../src/core/treasury/books/operator.js';
import { prepareTransfers } from '../../src/core/payments/execute/chain-calls.js';
import { claimRuns } from '../../src/core/payments/execute/claim.js';
import { runOf } from '../../src/core/payments/execute/run.js';
import { HELD, signTransfers } from '../../src/core/payments/execute/sign.js';
import { readKnownTxIds } from '../../src/db/queries/books.js';
import { deleteLeases } from '../../src/db/queries/leases.js';
import { AppError } from '../../src/domain/errors.js';
import { EXECUTION_QUEUE, type ExecutionJob } from '../../src/jobs/queue.js';
import { createPayment, createTestContext, ETH_ADDRESS, type TestContext } from '../helpers/context.js';
import { drainExecution } from '../helpers/workers.js';

const quiet = pino({ level: 'silent' });
let t: TestContext;

beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => {
  await t?.close();
});

/** What a promoted standby looks like to the books: the stored history is not the database's any more. */
const failOver = () => t.db.pool.query('UPDATE books_history SET timeline = timeline + 1');
const attempts = async (id: string) => (await t.db.pool.query('SELECT 1 FROM payment_attempts WHERE payment_intent_id = $1', [id])).rowCount;
const audit = (actor: string) => ({ actor: { id: actor, role: 'operator' as const, peer: null }, action: 'books.test', targets: [], details: {} });

describe('signing after the database history changed', () => {
  it('is refused inside the signing transaction, even for a run claimed before; the job comes back later', async () => {
    const id = await createPayment(t.app, 5, { ethereum_address: ETH_ADDRESS });
    const [job] = await t.boss.fetch<ExecutionJob>(EXECUTION_QUEUE, { batchSize: 1, ignoreStartAfter: true });
    const deps = { ...t.ctx, log: quiet };
    const run = runOf(job!.data);
    // Claimed and prepared while the books' history was the database's.
    const [claim] = await claimRuns(deps, [run]);
    expect(claim!.ok && claim!.value.kind).toBe('claimed');
    const intent = claim!.ok && claim!.value.kind === 'claimed' ? claim!.value.intent : null;
    const [prepared] = await prepareTransfers(deps, [{ intent: intent!, alone: false }]);
    await failOver();
    const [signed] = await signTransfers(deps, [{ run, intent: intent!, prepared: (prepared as { ok: true; value: never }).value }]);
    expect(signed).toEqual({ ok: true, value: HELD });
    expect(await attempts(id)).toBe(0);
    // The run ends as executeBatch ends it: its lease given back, its job complete.
    await deleteLeases(t.db.pool, [{ intentId: id, owner: run.runId }]);
    await t.boss.complete(EXECUTION_QUEUE, job!.id);
    // The same attempt's job is queued again, for later.
    const again = await t.db.pool.query("SELECT data->>'attempt' AS attempt, start_after > now() AS later FROM pgboss.job WHERE name = $1 AND data->>'payment_intent_id' = $2 AND state = 'created'", [
      EXECUTION_QUEUE,
      id,
    ]);
    expect(again.rows).toEqual([{ attempt: '1', later: true }]);
    // Drained meanwhile (start times ignored), it is deferred again at its claim: still nothing signed.
    await drainExecution(t, 5).catch(() => undefined);
    expect(await attempts(id)).toBe(0);

    // 2. A check: the history recorded, the chains held, and the simulated chains trivially matched: lifted.
    const outcomes = await checkBooks({ ...t.ctx, log: quiet });
    expect(outcomes.map((o) => o.verdict).sort()).toEqual(['matched', 'matched']);
    const holds = await t.db.pool.query("SELECT chain, state, lifted_by FROM chain_holds ORDER BY chain");
    expect(holds.rows).toEqual([
      { chain: 'ethereum', state: 'lifted', lifted_by: 'check' },
      { chain: 'solana', state: 'lifted', lifted_by: 'check' },
    ]);
    await drainExecution(t);
    expect(await attempts(id)).toBe(1);
  });
});

describe('an operator accounting for a chain the books are behind', () => {
  it('attaches only what the check found, to payments that match it, and declares foreign with two operators', async () => {
    const findings = {
      unknown: [{ tx_id: '0xfeed', nonce: 7, failed: false, memo: null, transfers: [{ to: ETH_ADDRESS, amount_micros: '999000000' }], signed: null }],
      unknown_nonces: [8],
      incomplete: false,
    };
    await t.db.pool.query(
      `INSERT INTO chain_holds (id, chain, opened_at, history_from, history_to, state, mark, findings, checked_at)
       VALUES ('hld_test', 'ethereum', now(), 'a/1', 'a/2', 'behind', '1', $1, now())`,
      [findings],
    );
    const deps = { ...t.ctx };
    const refusal = (p: Promise<unknown>) => p.then(() => null, (error: unknown) => (error instanceof AppError ? error.code : String(error)));
    expect(await refusal(attachUnknownTransaction(deps, { chain: 'ethereum', txId: '0xother', payments: null, audit: audit('op_a') }))).toBe('NOT_FOUND');
    expect(await refusal(attachUnknownTransaction(deps, { chain: 'solana', txId: '0xfeed', payments: null, audit: audit('op_a') }))).toBe('INVALID_STATE');
    // Its bytes were not returned by the node: nothing to record as an attempt.
    expect(await refusal(attachUnknownTransaction(deps, { chain: 'ethereum', txId: '0xfeed', payments: null, audit: audit('op_a') }))).toBe('INVALID_STATE');

    const foreign = (actor: string, target: { txId: string | null; nonce: number | null }) =>
      declareForeign(deps, { chain: 'ethereum', ...target, reason: 'a test transfer of ours by hand', audit: audit(actor) });
    expect(await refusal(foreign('op_a', { txId: null, nonce: 9 })), 'a nonce the check did not find').toBe('NOT_FOUND');
    expect(await refusal(foreign('op_a', { txId: '0xfeed', nonce: null }))).toBe('FOREIGN_DECLARATION_PENDING');
    expect(await readKnownTxIds(t.db.pool, 'ethereum', ['0xfeed'])).toEqual(new Set());
    expect(await refusal(foreign('op_a', { txId: '0xfeed', nonce: null })), 'the same operator twice').toBe('SELF_APPROVAL');
    expect(await foreign('op_b', { txId: '0xfeed', nonce: null })).toMatchObject({ tx_id: '0xfeed', nonce: 7, declared_by: 'op_a', approved_by: 'op_b' });
    expect(await readKnownTxIds(t.db.pool, 'ethereum', ['0xfeed'])).toEqual(new Set(['0xfeed']));
    const records = await t.db.pool.query("SELECT actor, outcome FROM audit_log WHERE action = 'books.test' ORDER BY seq");
    expect(records.rows).toEqual([{ actor: 'op_b', outcome: 'ok' }]);
  });
});
