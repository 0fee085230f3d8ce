// The database faults of the simulator (sim/faults/db.ts) as the service meets them, on a real PostgreSQL: what
// withTransaction and its callers see of each, what the server really did (an ambiguous commit committed, a lost
// connection rolled back), that the pool works again after, and that a seed replays the same faults in the same order.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/db/outage.js';
import { withReadSnapshot, withTransaction, withTransactionOnce, type Pool } from '../../src/db/pool.js';
import { afterCommit } from '../../src/db/after-commit.js';
import { DB_TRANSACTION_TRIES_MAX } from '../../src/bounds.js';
import { POOL_TIMEOUT_MESSAGE } from '../../sim/faults/db-errors.js';
import { wrapPool } from '../../sim/faults/db.js';
import { createFaultPlan, noFaults, type FaultKind, type FaultPlan } from '../../sim/faults/plan.js';
import { Rng } from '../../sim/rng.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let keys = 0;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('CREATE TABLE sim_probe (id text PRIMARY KEY, note text)');
});
afterAll(async () => {
  await db?.drop();
});

/** A plan that injects `kind` exactly at the rolls of it numbered in `at` (1-based), and nothing else. */
function scripted(script: Partial<Record<FaultKind, number[]>>): FaultPlan & { rolls: Map<FaultKind, number> } {
  const rolls = new Map<FaultKind, number>();
  const plan = noFaults();
  const counts = new Map<FaultKind, number>();
  return {
    ...plan,
    counts,
    rolls,
    roll(kind) {
      const n = (rolls.get(kind) ?? 0) + 1;
      rolls.set(kind, n);
      const hit = script[kind]?.includes(n) ?? false;
      if (hit) counts.set(kind, (counts.get(kind) ?? 0) + 1);
      return hit;
    },
  };
}

const key = () => `k${++keys}`;
const insert = (tx: pg.PoolClient | Pool, id: string) => tx.query('INSERT INTO sim_probe (id) VALUES ($1)', [id]);
const exists = async (id: string) => (await db.pool.query('SELECT 1 FROM sim_probe WHERE id = $1', [id])).rowCount === 1;
const backendPid = async (tx: pg.PoolClient) => (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
const alive = async (pid: number) =>
  (await db.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).rowCount === 1;

async function failure(work: Promise<unknown>): Promise<Error & { code?: string; severity?: string }> {
  const outcome = await work.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (!(outcome instanceof Error)) throw new Error(`expected a failure, got ${String(outcome)}`);
  return outcome;
}

/** Waits, up to a deadline, for the server to be done with a backend whose client went away. */
async function gone(pid: number): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (!(await alive(pid))) return true;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return false;
}

describe('noFaults()', () => {
  it('passes every statement, result and real error through untouched', async () => {
    const pool = wrapPool(db.pool, noFaults(), new Rng(1));
    const id = key();
    const result = await withTransaction(pool, async (tx) => {
      await insert(tx, id);
      return (await tx.query<{ id: string }>('SELECT id FROM sim_probe WHERE id = $1', [id])).rows;
    });
    expect(result).toEqual([{ id }]);
    expect((await pool.query<{ n: number }>('SELECT $1::int + 1 AS n', [41])).rows).toEqual([{ n: 42 }]);
    const duplicate = await failure(insert(pool, id));
    expect(duplicate).toMatchObject({ code: '23505', constraint: 'sim_probe_pkey' });
    expect(pool.notices).toBe(db.pool.notices);
    expect(pool.target).toBe(db.pool.target);
  });
});

describe('an ambiguous commit', () => {
  it('commits on the server while withTransaction fails as on a dead connection, which it discards', async () => {
    const plan = scripted({ 'db.ambiguous_commit': [1, 2, 3, 4, 5, 6] });
    const pool = wrapPool(db.pool, plan, new Rng('ambiguous'));
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const id = key();
      let pid = 0;
      let effects = 0;
      const error = await failure(
        withTransaction(pool, async (tx) => {
          pid = await backendPid(tx);
          await insert(tx, id);
          await afterCommit(tx, async () => void effects++);
        }),
      );
      // What the service's classifier sees: an outage, not a bug, and no retry of the (committed) transaction.
      expect(isDatabaseUnavailable(error)).toBe(true);
      seen.add(error.code ?? error.message);
      expect(await exists(id)).toBe(true);
      expect(effects).toBe(0);
      expect(await gone(pid)).toBe(true);
    }
    // Both ways a connection dies: the backend terminated (FATAL 57P01), the network dropping it (pg's own message).
    expect([...seen].sort()).toEqual(['57P01', 'Connection terminated unexpectedly']);
    expect(plan.counts.get('db.ambiguous_commit')).toBe(6);
    // The pool works again after.
    const id = key();
    await withTransaction(pool, (tx) => insert(tx, id));
    expect(await exists(id)).toBe(true);
  });
});

describe('an ambiguous statement outside a transaction', () => {
  it('applies on the server while its caller sees the connection die', async () => {
    const pool = wrapPool(db.pool, scripted({ 'db.ambiguous_commit': [1] }), new Rng(2));
    const id = key();
    const error = await failure(insert(pool, id));
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(await exists(id)).toBe(true);
    expect((await pool.query<{ n: number }>('SELECT 1 AS n')).rows).toEqual([{ n: 1 }]);
  });
});

describe('a serialization failure and a deadlock', () => {
  it.each([
    ['db.serialization_failure', '40001'],
    ['db.deadlock', '40P01'],
  ] as const)('%s: PostgreSQL aborts the transaction with %s, withTransaction runs it again, once committed', async (kind, code) => {
    const pool = wrapPool(db.pool, scripted({ [kind]: [2] }), new Rng(kind));
    const id = key();
    const errors: unknown[] = [];
    let attempts = 0;
    const answer = await withTransaction(pool, async (tx) => {
      attempts++;
      await insert(tx, id);
      try {
        await tx.query('UPDATE sim_probe SET note = $2 WHERE id = $1', [id, 'second']);
      } catch (error) {
        errors.push(error);
        // The transaction really is aborted, as after the real failure: the next statement is refused.
        expect(await failure(tx.query('SELECT 1'))).toMatchObject({ code: '25P02' });
        throw error;
      }
      return attempts;
    });
    expect(answer).toBe(2);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code, severity: 'ERROR', name: 'error' });
    expect(isDatabaseUnavailable(errors[0])).toBe(false);
    expect((await db.pool.query('SELECT note FROM sim_probe WHERE id = $1', [id])).rows).toEqual([{ note: 'second' }]);
  });

  it('fails the caller with the real error once the tries are spent, having committed nothing', async () => {
    const every = Array.from({ length: DB_TRANSACTION_TRIES_MAX }, (_, i) => i + 1);
    const pool = wrapPool(db.pool, scripted({ 'db.deadlock': every }), new Rng(3));
    const id = key();
    const error = await failure(withTransaction(pool, (tx) => insert(tx, id)));
    expect(error).toMatchObject({ code: '40P01', message: 'deadlock detected', hint: 'See server log for query details.' });
    expect(await exists(id)).toBe(false);
  });

  it('strikes only statements that write or lock, never a plain read nor a read-only snapshot', async () => {
    const always = Array.from({ length: 50 }, (_, i) => i + 1);
    const pool = wrapPool(db.pool, scripted({ 'db.serialization_failure': always }), new Rng(6));
    const id = key();
    await insert(db.pool, id);
    const read = `SELECT id FROM sim_probe WHERE id = $1`;
    expect(await withReadSnapshot(pool, async (tx) => (await tx.query(read, [id])).rowCount)).toBe(1);
    const once = (text: string) => withTransactionOnce(pool, { idleTimeoutMs: 1000 }, async (tx) => (await tx.query(text, [id])).rowCount);
    expect(await once(read)).toBe(1);
    expect(await failure(once(`${read} FOR UPDATE`))).toMatchObject({ code: '40001' });
    expect(await failure(once('UPDATE sim_probe SET note = note WHERE id = $1'))).toMatchObject({ code: '40001' });
  });

  it('fails a transaction that is never retried at once', async () => {
    const pool = wrapPool(db.pool, scripted({ 'db.serialization_failure': [1] }), new Rng(4));
    const id = key();
    const error = await failure(withTransactionOnce(pool, { idleTimeoutMs: 1000 }, (tx) => insert(tx, id)));
    expect(error.code).toBe('40001');
    expect(error.message).toMatch(/^could not serialize access due to /);
    expect(await exists(id)).toBe(false);
  });
});

describe('a connection lost mid-transaction', () => {
  it('rolls back on the server, fails withTransaction as an outage, and the pool works again after', async () => {
    const plan = scripted({ 'db.connection_lost': [3, 6, 9, 12, 15, 18] });
    const pool = wrapPool(db.pool, plan, new Rng('lost'));
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const id = key();
      let pid = 0;
      let ran = 0;
      const error = await failure(
        withTransaction(pool, async (tx) => {
          ran++;
          pid = await backendPid(tx);
          await insert(tx, id);
          await tx.query('SELECT 1');
        }),
      );
      expect(ran).toBe(1);
      expect(isDatabaseUnavailable(error)).toBe(true);
      seen.add(error.code ?? error.message);
      expect(await gone(pid)).toBe(true);
      expect(await exists(id)).toBe(false);
    }
    expect([...seen].sort()).toEqual(['57P01', 'Connection terminated unexpectedly']);
    const id = key();
    await withTransaction(pool, (tx) => insert(tx, id));
    expect(await exists(id)).toBe(true);
  });
});

describe('a pool briefly exhausted', () => {
  it('refuses connect() as pg-pool times out, for a few calls, then serves again', async () => {
    const pool = wrapPool(db.pool, scripted({ 'db.pool_exhausted': [1] }), new Rng(5));
    const refusals: Error[] = [];
    for (;;) {
      const outcome = await pool.query('SELECT 1').then(
        () => undefined,
        (error: Error) => error,
      );
      if (outcome === undefined) break;
      refusals.push(outcome);
      expect(refusals.length).toBeLessThanOrEqual(3);
    }
    expect(refusals.length).toBeGreaterThanOrEqual(1);
    for (const error of refusals) {
      expect(error.message).toBe(POOL_TIMEOUT_MESSAGE);
      expect(isDatabaseUnavailable(error)).toBe(true);
    }
    const id = key();
    await withTransaction(pool, (tx) => insert(tx, id));
    expect(await exists(id)).toBe(true);
  });
});

describe('determinism', () => {
  const rates = {
    'db.ambiguous_commit': 0.1,
    'db.serialization_failure': 0.05,
    'db.deadlock': 0.05,
    'db.connection_lost': 0.05,
    'db.pool_exhausted': 0.05,
  };

  /** The same sequential workload on a pool wrapped for `seed`: what each transaction's caller saw, in order. */
  async function run(seed: number): Promise<string[]> {
    const rng = new Rng(seed);
    const plan = createFaultPlan(rng.fork('faults'), rates);
    const pool = wrapPool(db.pool, plan, rng.fork('db'));
    const seen: string[] = [];
    for (let i = 0; i < 40; i++) {
      const id = `${seed}-${i}-${key()}`;
      const outcome = await withTransaction(pool, async (tx) => {
        await insert(tx, id);
        await tx.query('UPDATE sim_probe SET note = $2 WHERE id = $1', [id, 'x']);
        return 'ok';
      }).catch((error: Error & { code?: string }) => error.code ?? error.message);
      seen.push(outcome);
    }
    seen.push(JSON.stringify([...plan.counts].sort()));
    return seen;
  }

  it('replays the same faults in the same order for the same seed', async () => {
    const first = await run(7);
    expect(await run(7)).toEqual(first);
    expect(first.filter((o) => o !== 'ok').length).toBeGreaterThan(2);
    expect(await run(8)).not.toEqual(first);
  });
});
