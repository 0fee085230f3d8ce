// A worker that stalls (issue 37, process faults): a long GC pause, a network partition, a VM frozen by its host. A
// run of the real batch functions is given a process of its own whose run stops at a chosen point and waits, holding
// its in-memory state (its batch, its runs, what the chain and the screening told it); while it waits its pool holds
// every statement back until release (its lease heartbeat's renewals included), so its leases run out as a stalled
// process's do. Unlike a death (mortal.ts) the run is then released and carries on from where it stopped, with that
// stale state: only the real code's locked re-checks (the lease, the status, the live transfer) may stop it.
//   claim:  after the claim, at the run's first chain call (before the chain is asked about a transfer, or prepares one)
//   sign:   after the recipients were screened, before the signature transaction
//   send:   after the signed transfers were persisted, before they are sent
//   record: after the node answered the send (took the transfer, or refused it), before the outcome is recorded
// A run that never reaches its point stalls at the next one it reaches.
// A stall never holds a transaction open: the execution calls the chain and the screening with no lock held.
//
// The process that takes the payment over may be gated (`gatedProcess`): at its first call to the chain (made with no
// lock held, after its claim) it waits while the simulator does something, such as releasing the stalled run, so the
// stale run's late writes meet a payment whose lease another live run holds, in a fixed order.
import type { Screener } from '../../src/core/screening/screener.js';
import { createPool } from '../../src/db/pool.js';
import type { Pool } from '../../src/db/pool.js';
import type pg from 'pg';
import type { Process } from '../world.js';
import { wrapAdapters } from './adapters.js';

export const STALL_POINTS = ['claim', 'sign', 'send', 'record'] as const;
export type StallPoint = (typeof STALL_POINTS)[number];

export interface Stalling {
  process: Process;
  /** Resolves once the run stalled at its point (its statements in flight then settled); never, if it does not get there. */
  reached: Promise<void>;
  readonly stalled: boolean;
  /** Where it stalled (null: not yet). */
  readonly at: StallPoint | null;
  readonly released: boolean;
  /** Lets the run carry on: its held statements go to the server, its call returns. */
  release(): void;
  /** Closes the process's own connections (after its run ended). */
  close(): Promise<void>;
}

/** A process that stalls at `point`, on connections of its own to `databaseUrl`. */
export function stallingProcess(base: Process, point: StallPoint, databaseUrl: string): Stalling {
  let stalled = false;
  let at: StallPoint | null = null;
  let released = false;
  let onReached!: () => void;
  const reached = new Promise<void>((resolve) => (onReached = resolve));
  let onRelease!: () => void;
  const releasing = new Promise<void>((resolve) => (onRelease = resolve));
  const holding = () => stalled && !released;
  const own = createPool(databaseUrl, 4);
  // Statements sent before the stall (a heartbeat's renewal) settle before time moves: a renewal that landed after the
  // clock jump would keep the lease alive.
  const inFlight = new Set<Promise<unknown>>();
  const pool = new Proxy(own, {
    get(target, property, receiver) {
      if (property === 'query' || property === 'connect') {
        return (...args: unknown[]) => {
          const run = () => (target[property] as (...a: unknown[]) => unknown).apply(target, args);
          if (holding()) return releasing.then(run);
          const result = run();
          if (result instanceof Promise) {
            inFlight.add(result);
            void result.then(
              () => inFlight.delete(result),
              () => inFlight.delete(result),
            );
          }
          return result;
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as Pool;
  // The first call to reach the point, or a later one (a run that sends again what an earlier run signed is never
  // screened), stalls the process; every other call of it waits there too until release.
  const stallAt = async (here: StallPoint): Promise<void> => {
    if (!stalled && STALL_POINTS.indexOf(here) >= STALL_POINTS.indexOf(point)) {
      stalled = true;
      at = here;
      await Promise.allSettled([...inFlight]);
      onReached();
    }
    if (holding()) await releasing;
  };
  const adapters = wrapAdapters(base.adapters, (property, call) => {
    if (property === 'getStatuses' || property === 'prepareTransfers' || property === 'prepareReplacement') {
      return async (...args: unknown[]) => {
        await stallAt('claim');
        return call(...args);
      };
    }
    if (property === 'broadcast') {
      return async (...args: unknown[]) => {
        await stallAt('send');
        try {
          return await call(...args);
        } finally {
          await stallAt('record');
        }
      };
    }
    return call;
  });
  const screener = new Proxy(base.screener, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (property !== 'screen') return (value as (...a: unknown[]) => unknown).bind(target);
      return async (...args: unknown[]) => {
        const verdicts = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        await stallAt('sign');
        return verdicts;
      };
    },
  }) as Screener;
  return {
    process: { ...base, pool, adapters, screener },
    reached,
    get stalled() {
      return stalled;
    },
    get at() {
      return at;
    },
    get released() {
      return released;
    },
    release() {
      released = true;
      onRelease();
    },
    close: () => own.end(),
  };
}

/** The chain calls a run makes with no lock held: a gate there never blocks anyone else's transaction. */
const UNLOCKED_CHAIN_CALLS = new Set<PropertyKey>(['getStatuses', 'prepareTransfers', 'prepareReplacement', 'broadcast']);

/**
 * `base` whose first chain call (of those made with no lock held) runs `atFirstCall` and waits for it; every later
 * call waits for it too, so nothing of this process moves until it is done. `atFirstCall` starts once no transaction
 * or statement of the process is open (another of its steps, running alongside, finishes what it wrote first), so
 * what it sees of the database is what the process has committed.
 */
export function gatedProcess(base: Process, atFirstCall: () => Promise<void>): { process: Process; readonly opened: boolean } {
  let open = 0;
  let onIdle: (() => void) | null = null;
  const done = () => {
    open--;
    if (open === 0 && onIdle) onIdle();
  };
  const idle = () => (open === 0 ? Promise.resolve() : new Promise<void>((resolve) => (onIdle = resolve)));
  const pool = new Proxy(base.pool, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (property === 'query') {
        return async (...args: unknown[]) => {
          open++;
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
          } finally {
            done();
          }
        };
      }
      if (property === 'connect') {
        return async () => {
          const client = (await (value as () => Promise<pg.PoolClient>).apply(target)) as pg.PoolClient;
          open++;
          let released = false;
          return new Proxy(client, {
            get(c, p) {
              const v = Reflect.get(c, p, c) as unknown;
              if (p === 'release') {
                return (...a: unknown[]) => {
                  if (!released) {
                    released = true;
                    done();
                  }
                  return (v as (...x: unknown[]) => unknown).apply(c, a);
                };
              }
              return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(c) : v;
            },
          });
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as Pool;
  let gate: Promise<void> | null = null;
  const pass = () => (gate ??= idle().then(atFirstCall));
  const adapters = wrapAdapters(base.adapters, (property, call) => {
    if (!UNLOCKED_CHAIN_CALLS.has(property)) return call;
    return async (...args: unknown[]) => {
      await pass();
      return call(...args);
    };
  });
  return {
    process: { ...base, pool, adapters },
    get opened() {
      return gate !== null;
    },
  };
}
