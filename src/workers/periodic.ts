// A bounded periodic loop: runs `tick` every `seconds`, never two at once, sooner when woken, and stops cleanly.
// Every background loop of a worker process runs on it (confirmation, health, webhooks).
import type { Logger } from 'pino';

/** A tick that resolves to this had more to do: the loop runs it again right away, after yielding to the event loop. */
export const RUN_AGAIN = Symbol('run again');

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
        if (result === RUN_AGAIN) again = true;
      })
      .catch((error: unknown) => log?.error({ err: error, loop: name }, 'periodic task failed; retrying next period'))
      .finally(() => {
        inFlight = null;
        if (again) {
          again = false;
          schedule(0);
          return;
        }
        schedule(seconds * 1000);
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
