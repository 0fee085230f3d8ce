// One place where RPC calls get their deadline: every request is sent with an AbortSignal that fires after the
// configured timeout, and every failure leaves as a ChainError.
import { createDefaultRpcTransport, createSolanaRpcFromTransport, type PendingRpcRequest, type Rpc, type RpcTransport, type SolanaRpcApi } from '@solana/kit';
import { inRpcSpan } from '../rpc-span.js';
import { rpcFailure } from './errors.js';

// The commitment for everything a transfer is built from. Preflight uses the same one: a blockhash newer than the
// preflight bank would be refused as "not found".
export const BUILD_COMMITMENT = 'confirmed';

export type SolanaRpc = Rpc<SolanaRpcApi>;

export interface RpcClient {
  readonly rpc: SolanaRpc;
  readonly timeoutMs: number;
}

export function createRpcClient(rpcUrl: string, timeoutSeconds: number, chain = 'solana'): RpcClient {
  // createSolanaRpc's own transport, each request in a span of its own while traces are on (src/chains/rpc-span.ts).
  const transport = createDefaultRpcTransport({ url: rpcUrl });
  const traced = ((config: Parameters<RpcTransport>[0]) => inRpcSpan(chain, config.payload, () => transport(config))) as typeof transport;
  return { rpc: createSolanaRpcFromTransport(traced) as SolanaRpc, timeoutMs: Math.max(1, Math.round(timeoutSeconds * 1000)) };
}

/** Sends one request with the client's timeout. Throws ChainError. */
export async function call<T>(client: RpcClient, action: string, request: PendingRpcRequest<T>): Promise<T> {
  try {
    return await request.send({ abortSignal: AbortSignal.timeout(client.timeoutMs) });
  } catch (error) {
    throw rpcFailure(error, action);
  }
}
