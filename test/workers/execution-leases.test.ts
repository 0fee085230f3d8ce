// Execution leases (decisions 57, 191): a run holds its payment's lease from its job's fetch and renews it; a second run
// of the same attempt stops at its claim; a lease that ran out (its worker died, before its claim or after) is taken
// over by the sweeper, which resumes the payment at once; a run presumed dead that wakes up writes nothing; a payment
// whose runs keep dying is abandoned to manual review.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ChainAdapter, ChainAdapters } from '../../src/chains/port.js';
import { handleDeadExecution } from '../../src/core/payments/execute/abandon.js';
import type { ExecutionDeps } from '../../src/core/payments/execute/execute.js';
import { EXECUTION_BATCH_JOBS_MAX, LEASE_TAKEOVERS_MAX } from '../../src/bounds.js';
import { fetchRuns } from '../../src/core/payments/execute/fetch.js';
import { resumeExpiredExecutions } from '../../src/core/payments/execute/recover.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createPayment, createTestContext, KEY, type TestContext } from '../helpers/context.js';
import { EXECUTION_QUEUE } from '../../src/jobs/queue.js';
import { drainExecution, executeAlone } from '../helpers/workers.js';

// Long enough that no heartbeat comes while a test plays a worker's death by ageing the lease by hand.
let t: TestContext;
beforeAll(async () => {
  t = await createTestContext({ SIM_TREASURY_USDC: '1000', EXECUTION_LEASE_SECONDS: '30' });
});
afterAll(async () => t.close());

const quiet = pino({ level: 'silent' });
const deps = (adapters: ChainAdapters = t.ctx.adapters, leaseSeconds = 30): ExecutionDeps => ({
  ...t.ctx,
  config: { ...t.ctx.config, executionLeaseSeconds: leaseSeconds },
  adapters,
  log: quiet,
});
const read = async (id: string) => (await t.app.inject({ method: 'GET', url: `/payment_intents/${id}`, headers: KEY })).json();

/** The simulated Solana chain, but broadcast() waits until the test opens the gate: a run stuck mid-send. */
function gated(): { adapters: ChainAdapters; open(): void; entered: Promise<void>; sends: () => number } {
  let open!: () => void;
  let entered!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const enteredPromise = new Promise<void>((resolve) => (entered = resolve));
  let sends = 0;
  const solana: ChainAdapter = {
    ...t.ctx.adapters.solana!,
    async broadcast(signed) {
      sends++;
      entered();
      await gate;
      return t.ctx.adapters.solana!.broadcast(signed);
    },
  };
  return { adapters: { ...t.ctx.adapters, solana }, open, entered: enteredPromise, sends: () => sends };
}

async function lease(id: string) {
  const { rows } = await t.db.pool.query('SELECT owner, attempt, takeovers, expires_at FROM execution_leases WHERE payment_intent_id = $1', [id]);
  return rows[0] ?? null;
}

/** What a worker that died leaves behind: its lease, no longer renewed, runs out. */
async function expireLease(id: string): Promise<void> {
  await t.db.pool.query("UPDATE execution_leases SET expires_at = now() - interval '1 second' WHERE payment_intent_id = $1", [id]);
}

async function onChain(id: string): Promise<number> {
  const { rows } = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM sim_payouts WHERE ref = $1", [id]);
  return rows[0].n;
}

describe('execution leases', () => {
  it('a second run of the same attempt stops at its claim while the first one is alive', async () => {
    const id = await createPayment(t.app, 5);
    const stuck = gated();
    const first = executeAlone(deps(stuck.adapters), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    expect(await lease(id)).toMatchObject({ attempt: 1, takeovers: 0 });

    await executeAlone(deps(), { payment_intent_id: id, attempt: 1 }); // pg-boss re-ran the job, say
    expect((await read(id)).status).toBe('broadcasting');
    expect(await resumeExpiredExecutions(deps())).toEqual({ resumed: 0, abandoned: 0 }); // the lease is alive

    stuck.open();
    await first;
    const intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts).toHaveLength(1);
    expect(stuck.sends()).toBe(1);
    expect(await lease(id)).toBeNull(); // released at the end of the run
  });

  it('a dead run (its lease ran out) is resumed by the sweeper at once; the run, if it wakes, writes nothing', async () => {
    const id = await createPayment(t.app, 6);
    const stuck = gated();
    // Killed between storing the signed transfer and sending it, as far as anyone can tell.
    const presumedDead = executeAlone(deps(stuck.adapters), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    const deadOwner = (await lease(id)).owner;
    await expireLease(id);

    expect(await resumeExpiredExecutions(deps())).toEqual({ resumed: 1, abandoned: 0 });
    let intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts).toHaveLength(1); // the same signed bytes were sent, nothing signed anew
    expect(await onChain(id)).toBe(1);

    // The old run was only paused; it wakes, sends the same bytes again (harmless) and finds the lease gone.
    stuck.open();
    await presumedDead;
    intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts).toHaveLength(1);
    expect(await onChain(id)).toBe(1);
    const transitions = await t.db.pool.query(
      "SELECT COUNT(*)::int AS n FROM payment_intent_transitions WHERE payment_intent_id = $1 AND to_status = 'broadcasted'",
      [id],
    );
    expect(transitions.rows[0].n).toBe(1);
    expect((await lease(id))?.owner ?? null).not.toBe(deadOwner);
    expect((await verifyLedger(t.db.pool)).problems).toEqual([]);
  });

  it('a resumption that fails keeps its lease to run out: the next sweep resumes the payment, even after the run it took over ended', async () => {
    // Found by the simulator (seed 1, 20,000 operations, embedded PostgreSQL 18): a run presumed dead woke, found the
    // sweeper's run holding the lease and ended (its job completed); the sweeper's run then met an outage and gave its
    // lease back, and with no job and no lease left nothing ever took the payment up again.
    const id = await createPayment(t.app, 6.5);
    const stuck = gated();
    const presumedDead = executeAlone(deps(stuck.adapters), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    await expireLease(id);

    const down: ChainAdapter = {
      ...t.ctx.adapters.solana!,
      async getStatuses() {
        throw new Error('the node is down');
      },
    };
    expect(await resumeExpiredExecutions(deps({ ...t.ctx.adapters, solana: down }))).toEqual({ resumed: 0, abandoned: 0 });
    const kept = await lease(id);
    expect(kept).toMatchObject({ attempt: 1, takeovers: 1 });

    // The paused run wakes: it sends its bytes, but the lease is not its own, so it records nothing and its job ends.
    stuck.open();
    await presumedDead;
    expect((await read(id)).status).toBe('broadcasting');

    await expireLease(id);
    expect(await resumeExpiredExecutions(deps())).toEqual({ resumed: 1, abandoned: 0 });
    const intent = await read(id);
    expect(intent.status).toBe('broadcasted');
    expect(intent.attempts).toHaveLength(1);
    expect(await onChain(id)).toBe(1);
    expect(await lease(id)).toBeNull();
  });

  it('the heartbeat keeps a long run\'s lease alive, so the sweeper leaves it be', async () => {
    const id = await createPayment(t.app, 7);
    const stuck = gated();
    const running = executeAlone(deps(stuck.adapters, 0.6), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    const first = (await lease(id)).expires_at.getTime();
    // Renewed every 0.2 s: wait for two renewals past the first expiry, the sweeper never gets it.
    await vi.waitFor(async () => expect((await lease(id)).expires_at.getTime()).toBeGreaterThan(first + 400), { timeout: 5_000, interval: 50 });
    expect(await resumeExpiredExecutions(deps(t.ctx.adapters, 0.6))).toEqual({ resumed: 0, abandoned: 0 });
    stuck.open();
    await running;
    expect((await read(id)).status).toBe('broadcasted');
  });

  it(`after ${LEASE_TAKEOVERS_MAX} dead runs of one attempt the sweeper abandons it: manual review, nothing failed`, async () => {
    const id = await createPayment(t.app, 8);
    const stuck = gated();
    const presumedDead = executeAlone(deps(stuck.adapters), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    await t.db.pool.query('UPDATE execution_leases SET takeovers = $2 WHERE payment_intent_id = $1', [id, LEASE_TAKEOVERS_MAX - 1]);
    await expireLease(id);

    expect(await resumeExpiredExecutions(deps())).toEqual({ resumed: 0, abandoned: 1 });
    const intent = await read(id);
    // The signed transfer was never sent, so the chain does not know it: it may still land if sent, so it is watched.
    expect(intent.status).toBe('manual_review');
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve', 'debit']);
    expect(await lease(id)).toBeNull();
    stuck.open();
    await presumedDead;
    expect((await read(id)).status).toBe('manual_review');
  });

  it('a lease left by an earlier attempt, or by a run that finished its step, holds nothing back', async () => {
    const id = await createPayment(t.app, 9);
    // A run recorded its outcome ('retrying', the next attempt queued) and died before letting go of its lease.
    await t.db.pool.query(
      "INSERT INTO execution_leases (payment_intent_id, owner, attempt, expires_at) VALUES ($1, 'run_dead', 1, now() + interval '1 hour')",
      [id],
    );
    await drainExecution(t);
    expect((await read(id)).status).toBe('broadcasted');
  });

  it('a job is fetched with its lease; a run that died before its claim is resumed by the sweeper, its death counted', async () => {
    await drainExecution(t); // the jobs earlier tests left queued
    const id = await createPayment(t.app, 3);
    const fetched = await fetchRuns(deps(), EXECUTION_BATCH_JOBS_MAX);
    expect(fetched.map((f) => f.job.data)).toEqual([{ payment_intent_id: id, attempt: 1 }]);
    // The job turned active with its payment's lease, in one transaction; then its worker died before the claim.
    expect(await lease(id)).toMatchObject({ owner: fetched[0]!.run.runId, attempt: 1, takeovers: 0 });
    expect(await resumeExpiredExecutions(deps())).toEqual({ resumed: 0, abandoned: 0 }); // alive until it runs out
    await expireLease(id);

    const stuck = gated();
    const sweep = resumeExpiredExecutions(deps(stuck.adapters));
    await stuck.entered;
    expect(await lease(id)).toMatchObject({ attempt: 1, takeovers: 1 }); // the claim kept the dead run's count
    stuck.open();
    expect(await sweep).toEqual({ resumed: 1, abandoned: 0 });
    expect((await read(id)).status).toBe('broadcasted');
    expect(await onChain(id)).toBe(1);

    // pg-boss expires the dead run's job later and runs it again: it finds the payment handled.
    await executeAlone(deps(), fetched[0]!.job.data);
    expect((await read(id)).attempts).toHaveLength(1);
    expect(await onChain(id)).toBe(1);
    expect(await lease(id)).toBeNull();
  });

  it(`runs that keep dying before their claim are abandoned after ${LEASE_TAKEOVERS_MAX}: manual review, funds reserved`, async () => {
    await drainExecution(t);
    const id = await createPayment(t.app, 2);
    await fetchRuns(deps(), EXECUTION_BATCH_JOBS_MAX);
    await t.db.pool.query('UPDATE execution_leases SET takeovers = $2 WHERE payment_intent_id = $1', [id, LEASE_TAKEOVERS_MAX - 1]);
    await expireLease(id);
    expect(await resumeExpiredExecutions(deps())).toEqual({ resumed: 0, abandoned: 1 });
    const intent = await read(id);
    expect(intent.status).toBe('manual_review');
    expect(intent.ledger_entries.map((e: { type: string }) => e.type)).toEqual(['reserve']);
    expect(await lease(id)).toBeNull();
  });

  it('a fetch leaves a live lease to its run and leases nothing for a payment no run works on', async () => {
    await drainExecution(t);
    const id = await createPayment(t.app, 1);
    const stuck = gated();
    const running = executeAlone(deps(stuck.adapters), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    const owner = (await lease(id)).owner;
    // Its job (queued at creation) fetched now, as pg-boss would re-run it: the live run keeps its lease.
    expect((await fetchRuns(deps(), EXECUTION_BATCH_JOBS_MAX)).map((f) => f.job.data.payment_intent_id)).toEqual([id]);
    expect((await lease(id)).owner).toBe(owner);
    stuck.open();
    await running;
    expect(await lease(id)).toBeNull();
    // A stale job of a payment already sent, and one of no payment at all: no lease.
    await t.boss.insert([
      { name: EXECUTION_QUEUE, data: { payment_intent_id: id, attempt: 1 } },
      { name: EXECUTION_QUEUE, data: { payment_intent_id: 'pi_unknown', attempt: 1 } },
    ]);
    expect(await fetchRuns(deps(), EXECUTION_BATCH_JOBS_MAX)).toHaveLength(2);
    const { rows } = await t.db.pool.query("SELECT COUNT(*)::int AS n FROM execution_leases WHERE payment_intent_id = ANY($1::text[])", [[id, 'pi_unknown']]);
    expect(rows[0].n).toBe(0);
  });

  it('the dead-letter handler leaves a payment alone while another run of its attempt is alive', async () => {
    const id = await createPayment(t.app, 4);
    const stuck = gated();
    const running = executeAlone(deps(stuck.adapters), { payment_intent_id: id, attempt: 1 });
    await stuck.entered;
    await handleDeadExecution(deps(), { payment_intent_id: id, attempt: 1 });
    expect((await read(id)).status).toBe('broadcasting');
    stuck.open();
    await running;
    expect((await read(id)).status).toBe('broadcasted');
  });
});
