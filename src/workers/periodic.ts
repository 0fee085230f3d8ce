// A bounded periodic loop: runs `tick` every `seconds`, never two at once, and stops cleanly.
import type { Logger } from 'pino';

export interface Periodic {
  /** Runs a tick now (after the current one, if any). */
  wake(): void;
  stop(): Promise<void>;
}

export function every(name: string, seconds: number, tick: () => Promise<unknown>, log: Logger): Periodic {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let stopped = false;
  let again = false;

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
  const run = () => {
    timer = null;
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = tick()
      .then(() => undefined)
      .catch((error: unknown) => log.error({ err: error, loop: name }, 'periodic task failed; retrying next period'))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          schedule(0);
        } else {
          schedule(seconds * 1000);
        }
      });
  };
  schedule(0);
  return {
    wake: () => schedule(0),
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
