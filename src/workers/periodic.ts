// A bounded periodic loop: runs `tick` every `seconds`, never two at once, sooner when woken, and stops cleanly.
// Every background loop of a worker process runs on it (execution pollers, confirmation, health, webhooks). A tick
// that throws (the database restarting, say) is logged and the loop carries on: never an exit, never a crash.
import type { Logger } from 'pino';
import { PERIODIC_FAILURE_BACKOFF_MAX_MS } from '../bounds.js';

/** A tick that resolves to this had more to do: the loop runs it again right away, after yielding to the event loop. */
export const RUN_AGAIN = Symbol('run again');

/**
 * The wait after `failures` failed ticks in a row (1 or more) of a loop whose period is `periodMs`, doubling up to
 * PERIODIC_FAILURE_BACKOFF_MAX_MS. A wake() (a notice, which means the database answers again) runs a tick at once,
 * whatever the backoff.
 */
export function failureBackoffMs(periodMs: number, failures: number): number {
  return Math.min(Math.max(periodMs, PERIODIC_FAILURE_BACKOFF_MAX_MS), periodMs * 2 ** Math.min(failures, 30));
}

export interface PeriodicOptions {
  /** Called each time the loop has nothing left to do and waits for the next period or wake(). */
  onIdle?: () => void;
  /** How long stop() waits for the tick in flight; unbounded when unset. */
  stopTimeoutMs?: number;
}

export interface Periodic {
  /** Runs a tick now (after the current one, if any). */
  wake(): void;
  /** False once stop() was called: a long tick checks it to stop taking new work. */
  readonly running: boolean;
  /** Stops the timer and waits for the tick in flight (at most stopTimeoutMs). Idempotent. */
  stop(): Promise<void>;
}

export function every(
  name: string,
  seconds: number,
  tick: () => Promise<unknown>,
  log: Logger | undefined,
  options: PeriodicOptions = {},
): Periodic {
  let timer: NodeJS.Timeout | null = null;
  let inFlight: Promise<void> | null = null;
  let stopped = false;
  let again = false;
  let failures = 0;
  let stopping: Promise<void> | null = null;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    // Not unref'd: in a worker-only process these timers are what keeps it alive between ticks.
    timer = setTimeout(run, ms);
  };
  const run = () => {
    timer = null;
    if (stopped) return;
    if (inFlight) {
      again = true; // coalesced: one more tick once the current one ends
      return;
    }
    inFlight = tick()
      .then((result) => {
        if (failures > 0) log?.info({ loop: name, failures }, 'periodic task recovered');
        failures = 0;
        if (result === RUN_AGAIN) again = true;
      })
      .catch((error: unknown) => {
        failures++;
        log?.error({ err: error, loop: name, failures }, 'periodic task failed; retrying after a backoff');
      })
      .finally(() => {
        inFlight = null;
        if (again) {
          again = false;
          schedule(0);
          return;
        }
        schedule(failures > 0 ? failureBackoffMs(seconds * 1000, failures) : seconds * 1000);
        if (!stopped) {
          try {
            options.onIdle?.();
          } catch (error) {
            log?.error({ err: error, loop: name }, 'periodic onIdle hook threw');
          }
        }
      });
  };
  schedule(0);

  async function shutDown(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!inFlight) return;
    if (options.stopTimeoutMs === undefined) return inFlight;
    let wait: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      inFlight.then(() => true),
      new Promise<false>((resolve) => {
        wait = setTimeout(() => resolve(false), options.stopTimeoutMs);
      }),
    ]);
    clearTimeout(wait);
    if (!settled) log?.warn({ loop: name }, 'stopped with a tick in flight; its work is resumed on the next start');
  }

  return {
    wake: () => schedule(0),
    get running() {
      return !stopped;
    },
    stop: () => {
      stopped = true;
      stopping ??= shutDown();
      return stopping;
    },
  };
}
