// The group-commit mechanism alone (the reservation and quote batches are tested against PostgreSQL in
// test/api/batching.test.ts): a failing batch is split so only its culprit fails, unless the database is out of
// reach, when the whole batch fails at once instead of waiting out the outage once per item.
import { describe, expect, it } from 'vitest';
import { GroupCommit, isOutage, type ItemOutcome } from '../../src/db/group-commit.js';

function recorder(fail: (items: string[]) => unknown | null) {
  const calls: string[][] = [];
  const commit = new GroupCommit<string, string>(async (items): Promise<ItemOutcome<string>[]> => {
    calls.push(items);
    const error = fail(items);
    if (error) throw error;
    return items.map((item) => ({ ok: true, value: item.toUpperCase() }));
  }, 8);
  return { calls, commit };
}

const settle = (promises: Promise<string>[]) => Promise.allSettled(promises);

describe('GroupCommit', () => {
  it('writes what arrives meanwhile as one batch', async () => {
    const { calls, commit } = recorder(() => null);
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((x) => commit.submit(x)));
    expect(results).toEqual(['A', 'B', 'C', 'D']);
    expect(calls).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it('splits a batch that one item made fail: only that item fails', async () => {
    const culprit = Object.assign(new Error('value too long'), { code: '22001' });
    const { calls, commit } = recorder((items) => (items.includes('c') ? culprit : null));
    const results = await settle(['a', 'b', 'c', 'd'].map((x) => commit.submit(x)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual([['a'], ['b', 'c', 'd'], ['b'], ['c'], ['d']]);
  });

  it('fails a whole batch at once when the database is out of reach', async () => {
    const outage = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    const { calls, commit } = recorder((items) => (items.length > 1 ? outage : null));
    const results = await settle(['a', 'b', 'c', 'd'].map((x) => commit.submit(x)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(calls).toEqual([['a'], ['b', 'c', 'd']]);
  });

  it.each([
    [{ code: '08006' }, true],
    [{ code: '57014' }, true],
    [{ code: '53300' }, true],
    [{ code: 'ECONNREFUSED' }, true],
    [new Error('timeout exceeded when trying to connect'), true],
    [{ code: '57P01' }, true],
    [{ code: '57P03' }, true],
    [new Error('Connection terminated unexpectedly'), true],
    [new Error('Client has encountered a connection error and is not queryable'), true],
    [{ code: 'ECONNRESET' }, true],
    [{ code: '40001' }, false],
    [{ code: '23505' }, false],
    [{ code: '22001' }, false],
    [new Error('something else'), false],
  ])('isOutage(%o) is %s', (error, expected) => {
    expect(isOutage(error)).toBe(expected);
  });
});
