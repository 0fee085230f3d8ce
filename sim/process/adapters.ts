// The chain adapters of a simulated process with some of their methods changed (a process that dies, stalls, or waits
// at a gate): one proxy per adapter, every other method and property left as it is.
import type { ChainAdapter, ChainAdapters } from '../../src/chains/port.js';

export type Call = (...args: unknown[]) => unknown;

/** `adapters`, each method passed through `wrap` (given its name and the call itself, it answers what to call). */
export function wrapAdapters(adapters: ChainAdapters, wrap: (method: PropertyKey, call: Call) => Call): ChainAdapters {
  const wrapped: ChainAdapters = {};
  for (const [chain, adapter] of Object.entries(adapters) as [string, ChainAdapter][]) {
    wrapped[chain as keyof ChainAdapters] = new Proxy(adapter, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return wrap(property, (...args: unknown[]) => (value as Call).apply(target, args));
      },
    });
  }
  return wrapped;
}
