// A worker that dies (issue 37, process faults). A run of the real batch functions is given a process of its own whose
// chain calls stop at a chosen point and never return, as a process killed there would; from that moment its pool
// refuses every statement (its heartbeat's lease renewals included), so nothing of the dead run reaches the database
// again. Its in-memory state (the batch, its runs, its leases' owners) is dropped with it: only the real lease sweeper
// (src/core/payments/execute/recover.ts) can take the work up again, once the database clock passes the leases. The process
// has connections of its own, closed when it dies, so the server rolls back what it had open and frees its session
// locks (the confirmation round's advisory lock), as it does for a process that is killed.
//   claim:   after the jobs were fetched (and leased), before the claim
//   sign:    after the claim, while the transfers are prepared (before they are signed and persisted)
//   send:    after the signed transfers were persisted, before they are sent
//   record:  after the node took the transfers, before the sends are recorded
//   confirm: in a confirmation round, after the chain was asked, before its verdicts are recorded
import { createPool, type Pool } from '../../src/db/pool.js';
import type pg from 'pg';
import type { Process } from '../world.js';
import { wrapAdapters } from './adapters.js';

export const DEATH_POINTS = ['claim', 'sign', 'send', 'record', 'confirm'] as const;
export type DeathPoint = (typeof DEATH_POINTS)[number];

export class ProcessDied extends Error {
  override readonly name = 'ProcessDied';
}

export interface Mortal {
  process: Process;
  /** Resolves when the process dies (never, if it lives). */
  died: Promise<void>;
  readonly dead: boolean;
  /** Kills it now (the point `claim`: between two calls the simulator makes itself). */
  kill(): void;
}

const never = new Promise<never>(() => undefined);

/** A process that dies at `point` (on connections of its own to `databaseUrl`); `base` itself when it will not die. */
export function mortalProcess(base: Process, point: DeathPoint | null, databaseUrl: string): Mortal {
  if (point === null) return { process: base, died: new Promise(() => undefined), dead: false, kill: () => undefined };
  let dead = false;
  let onDeath!: () => void;
  const died = new Promise<void>((resolve) => (onDeath = resolve));
  const own = createPool(databaseUrl, 4);
  const clients = new Set<pg.PoolClient>();
  own.on('connect', (client) => clients.add(client));
  const kill = () => {
    if (dead) return;
    dead = true;
    // The connections die with the process: whatever it held open is rolled back by the server.
    for (const client of clients) (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    onDeath();
  };
  const pool = new Proxy(own, {
    get(target, property, receiver) {
      if (property === 'query' || property === 'connect') {
        return (...args: unknown[]) => {
          if (dead) return Promise.reject(new ProcessDied('the process is dead'));
          return (target[property] as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  }) as Pool;
  const dieAt = (here: DeathPoint): Promise<never> | null => {
    if (point !== here || dead) return null;
    kill();
    return never;
  };
  const adapters = wrapAdapters(base.adapters, (property, call) => {
    if (property === 'prepareTransfers' || property === 'prepareReplacement') return (...args: unknown[]) => dieAt('sign') ?? call(...args);
    if (property === 'broadcast') {
      return async (...args: unknown[]) => {
        const before = dieAt('send');
        if (before) return before;
        await call(...args);
        return dieAt('record') ?? undefined;
      };
    }
    if (property === 'getStatuses') return async (...args: unknown[]) => {
      const statuses = await call(...args);
      return dieAt('confirm') ?? statuses;
    };
    return call;
  });
  return {
    process: { ...base, pool, adapters },
    died,
    get dead() {
      return dead;
    },
    kill,
  };
}
