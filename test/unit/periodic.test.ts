// The shared periodic loop through an outage: a tick that throws is logged, the loop backs off (doubling from its
// period up to a cap) instead of retrying every period, a wake() still runs at once, and the first success brings
// the period back.
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PERIODIC_FAILURE_BACKOFF_MAX_MS } from '../../src/bounds.js';
import { every, failureBackoffMs } from '../../src/workers/periodic.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A loop of period `periodMs` whose ticks fail while `failing()`; returns when each tick ran (fake ms). */
function loop(periodMs: number, failing: () => boolean) {
  const at: number[] = [];
  const logged: unknown[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  const start = Date.now();
  const periodic = every(
    'test',
    periodMs / 1000,
    async () => {
      at.push(Date.now() - start);
      if (failing()) throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
    },
    log,
  );
  return { at, logged, periodic };
}

describe('periodic loop backoff', () => {
  it('waits twice as long after each failed tick, up to the cap, and the period again once a tick succeeds', async () => {
    let down = true;
    const { at, logged, periodic } = loop(200, () => down);
    await vi.advanceTimersByTimeAsync(0 + 400 + 800 + 1_600 + 3_200 + 5_000 + 5_000);
    // First tick at once; then 400, 800, 1600, 3200, then the 5 s cap.
    expect(at).toEqual([0, 400, 1_200, 2_800, 6_000, 11_000, 16_000]);
    down = false;
    await vi.advanceTimersByTimeAsync(5_000 + 200 + 200);
    expect(at.slice(7)).toEqual([21_000, 21_200, 21_400]);
    const messages = logged.map((l) => (l as { msg: string }).msg);
    expect(messages.filter((m) => m === 'periodic task failed; retrying after a backoff')).toHaveLength(7);
    expect(messages).toContain('periodic task recovered');
    await periodic.stop();
  });

  it('a wake() runs a tick at once, whatever the backoff', async () => {
    const { at, periodic } = loop(1_000, () => true);
    // Failed at 0 and at 2000: the next tick is due at 6000 (a 4 s backoff); a wake at 3000 runs one then.
    await vi.advanceTimersByTimeAsync(3_000);
    expect(at).toEqual([0, 2_000]);
    periodic.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(at).toEqual([0, 2_000, 3_000]);
    await periodic.stop();
  });

  it('a loop slower than the cap keeps its period', () => {
    expect(failureBackoffMs(60_000, 1)).toBe(60_000);
    expect(failureBackoffMs(60_000, 40)).toBe(60_000);
    expect(failureBackoffMs(100, 40)).toBe(PERIODIC_FAILURE_BACKOFF_MAX_MS);
  });
});
