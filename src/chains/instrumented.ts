// A ChainAdapter decorator that times every call that reaches the chain (or the simulated network) and counts the
// failures, per chain, adapter kind and method. One wrapper for every adapter, so no adapter carries metrics code.
// Local work (signing, address checks) is not timed: `sign` on a prepared transfer is returned untouched.
import type { Metrics } from '../metrics/registry.js';
import type { ChainAdapter } from './port.js';

const CHAIN_CALLS = [
  'estimateFee',
  'prepareTransfers',
  'prepareReplacement',
  'prepareCancel',
  'broadcast',
  'getStatuses',
  'head',
  'probe',
  'treasuryTokenBalance',
  'treasuryNativeBalance',
  'inboundPosition',
  'listInboundTransfers',
  'treasuryTransactions',
] as const satisfies readonly (keyof ChainAdapter)[];

type Timed = Pick<Metrics, 'chainRpcDuration' | 'chainRpcErrors'>;

export function instrumentAdapter<A extends ChainAdapter>(adapter: A, metrics: Timed): A {
  const calls = new Set<PropertyKey>(CHAIN_CALLS);
  // Wrapped on each read, per function: a method replaced on the adapter later (a test scripting probe()) is timed
  // as it is now, never as it was when the adapter was built.
  const wrappers = new WeakMap<(...args: unknown[]) => Promise<unknown>, unknown>();
  const wrap = (method: string, original: (...args: unknown[]) => Promise<unknown>) => {
    const labels = { chain: adapter.chain, adapter: adapter.kind, method };
    return async (...args: unknown[]) => {
      const stop = metrics.chainRpcDuration.startTimer(labels);
      try {
        return await original.apply(adapter, args);
      } catch (error) {
        metrics.chainRpcErrors.inc(labels);
        throw error;
      } finally {
        stop();
      }
    };
  };
  return new Proxy(adapter, {
    get: (target, property, receiver) => {
      const value: unknown = Reflect.get(target, property, receiver);
      if (!calls.has(property) || typeof value !== 'function') return value;
      const original = value as (...args: unknown[]) => Promise<unknown>;
      let wrapped = wrappers.get(original);
      if (!wrapped) {
        wrapped = wrap(String(property), original);
        wrappers.set(original, wrapped);
      }
      return wrapped;
    },
  });
}
