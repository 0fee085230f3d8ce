// The one viem client the adapter talks through. Every call is bounded: a per-request timeout and a small retry
// budget (eth_sendRawTransaction is never retried by viem; a resend is our decision, see broadcast.ts).
import { createPublicClient, http } from 'viem';

const READ_RETRIES = 2;
const RETRY_DELAY_MS = 100; // viem backs off exponentially from here: 100 ms, 200 ms

export function createEthereumRpc(rpcUrl: string, timeoutSeconds: number) {
  return createPublicClient({
    transport: http(rpcUrl, {
      timeout: Math.max(1, Math.round(timeoutSeconds * 1000)),
      retryCount: READ_RETRIES,
      retryDelay: RETRY_DELAY_MS,
    }),
    // Confirmations are counted from eth_blockNumber: a cached block number would under-count them.
    cacheTime: 0,
  });
}

export type EthereumRpc = ReturnType<typeof createEthereumRpc>;
