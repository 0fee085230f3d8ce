// The one viem client the adapter talks through. RPC_TIMEOUT_SECONDS bounds a whole adapter call, not each request:
// callers hold database row locks while they wait (a status read under FOR UPDATE, a nonce under the chain_nonces
// lock), so a dead node must release them after one timeout, not after retries of several sequential reads.
// viem retries nothing (a timeout retried is the same timeout again; the workers' jobs are the retry layer), and
// every request made inside `withDeadline` carries the call's AbortSignal, so none outlives the call that made it.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createPublicClient, http } from 'viem';
import { ETHEREUM_RPC_BATCH_REQUESTS_MAX } from '../../bounds.js';
import { inRpcSpan } from '../rpc-span.js';

const deadlines = new AsyncLocalStorage<AbortSignal>();

/** fetch, aborted when the deadline of the adapter call it belongs to passes. */
const fetchWithinDeadline: typeof fetch = (input, init) => {
  const deadline = deadlines.getStore();
  if (!deadline) return fetch(input, init);
  const signal = init?.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
  return fetch(input, { ...init, signal });
};

/**
 * `batch`: requests made in the same tick go out as one JSON-RPC batch (the status reads of a confirmation round:
 * one HTTP request per step for a whole page of transfers instead of one per transfer).
 */
export function createEthereumRpc(rpcUrl: string, timeoutSeconds: number, options: { batch?: boolean; chain?: string } = {}) {
  const chain = options.chain ?? 'ethereum';
  return createPublicClient({
    transport: http(rpcUrl, {
      timeout: timeoutMs(timeoutSeconds),
      retryCount: 0,
      // Each HTTP request in a span of its own while traces are on (src/chains/rpc-span.ts).
      fetchFn: (input, init) => inRpcSpan(chain, init?.body, () => fetchWithinDeadline(input, init)),
      ...(options.batch ? { batch: { batchSize: ETHEREUM_RPC_BATCH_REQUESTS_MAX } } : {}),
    }),
    // Confirmations are counted from eth_blockNumber: a cached block number would under-count them.
    cacheTime: 0,
  });
}

export type EthereumRpc = ReturnType<typeof createEthereumRpc>;

export function timeoutMs(timeoutSeconds: number): number {
  return Math.max(1, Math.round(timeoutSeconds * 1000));
}

/**
 * Runs `work` (any number of RPC reads, in sequence or in parallel) under one deadline. When it passes, the requests
 * still in flight are aborted and the call rejects with an error whose cause chain holds a 'TimeoutError', which
 * errors.ts classifies as a timeout. The race covers awaits that are not requests.
 */
export async function withDeadline<T>(ms: number, work: () => Promise<T>): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RpcDeadlineError(ms)), ms);
  });
  try {
    return await Promise.race([deadlines.run(signal, work), expired]);
  } finally {
    clearTimeout(timer);
  }
}

export class RpcDeadlineError extends Error {
  override readonly name = 'TimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`the node did not answer within ${timeoutMs} ms`);
  }
}
