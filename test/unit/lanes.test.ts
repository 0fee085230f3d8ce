// Bounded lanes (src/core/lanes.ts): at most `max` at once, opened at once or on demand, a lane that is done ends, and
// a failure stops them all taking work while the others finish what they hold.
import { describe, expect, it } from 'vitest';
import { inLanes } from '../../src/core/lanes.js';

/** A lane's work that resolves when told to, so a test decides the interleaving without waiting on time. */
function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('bounded lanes', () => {
  /** Work that yields once, counting the most pieces in flight at once and what was done. */
  function tracked(): { done: number[]; most(): number; work(n: number): Promise<void> } {
    const done: number[] = [];
    let inFlight = 0;
    let most = 0;
    return {
      done,
      most: () => most,
      async work(n) {
        most = Math.max(most, ++inFlight);
        await Promise.resolve();
        done.push(n);
        inFlight--;
      },
    };
  }

  it('opened at once: never more than max in flight, and every piece of work is done once', async () => {
    const work = Array.from({ length: 7 }, (_, i) => i);
    const t = tracked();
    await inLanes({ max: 3, opening: 'at once', take: () => work.shift(), run: (n) => t.work(n).then(() => true) });
    expect(t.most()).toBe(3);
    expect(t.done.sort()).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('on demand: one lane first, another only when a lane holding work asks for it', async () => {
    const work = [1, 2, 3, 4, 5];
    const t = tracked();
    await inLanes({
      max: 4,
      opening: 'on demand',
      take: () => work.shift(),
      run: async (n, openLane) => {
        const doing = t.work(n);
        if (n === 1) openLane(); // only the first piece of work lets a second lane open
        await doing;
        return true;
      },
    });
    expect(t.most()).toBe(2);
    expect(t.done.sort()).toEqual([1, 2, 3, 4, 5]);
  });

  it('a lane that says it is done ends, even with work left', async () => {
    const work = [1, 2, 3];
    const done: number[] = [];
    await inLanes({
      max: 1,
      opening: 'at once',
      take: () => work.shift(),
      run: async (n) => {
        done.push(n);
        return n !== 2;
      },
    });
    expect(done).toEqual([1, 2]);
    expect(work).toEqual([3]);
  });

  it('a failure stops every lane taking more; the others finish what they hold; the first failure is thrown', async () => {
    const work = [1, 2, 3, 4, 5, 6];
    const slow = gate();
    const finished: number[] = [];
    const run = inLanes({
      max: 2,
      opening: 'at once',
      take: () => work.shift(),
      run: async (n) => {
        if (n === 1) {
          await slow.promise;
          finished.push(n);
          return true;
        }
        throw new Error(`work ${n} failed`);
      },
    });
    slow.open();
    await expect(run).rejects.toThrow('work 2 failed');
    expect(finished).toEqual([1]);
    expect(work).toEqual([3, 4, 5, 6]);
  });
});
