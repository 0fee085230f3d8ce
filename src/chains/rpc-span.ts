// A client span for each JSON-RPC request a chain adapter sends, while traces are on (decision 212): the chain and the
// method names, never the params or the answer (a signed transaction, an address's history).
import { tracer } from '../tracing/tracer.js';

/** The method names of a JSON-RPC request or batch, as sent; [] when the body is not one. */
export function rpcMethodsOf(payload: unknown): string[] {
  let parsed = payload;
  if (typeof payload === 'string') {
    try {
      parsed = JSON.parse(payload);
    } catch {
      return [];
    }
  }
  const requests = Array.isArray(parsed) ? parsed : [parsed];
  return requests.map((r) => (typeof (r as { method?: unknown } | null)?.method === 'string' ? (r as { method: string }).method : 'unknown'));
}

/** Runs `send` (one HTTP request carrying `payload`) inside its span when traces are on; as is otherwise. */
export function inRpcSpan<T>(chain: string, payload: unknown, send: () => Promise<T>): Promise<T> {
  const t = tracer();
  if (!t.enabled) return send();
  const methods = rpcMethodsOf(payload);
  const distinct = [...new Set(methods)];
  const name = methods.length === 1 ? distinct[0]! : `batch ${distinct.join(',')}`;
  return t.inSpan(
    name,
    {
      kind: 'client',
      attributes: { 'rpc.system': 'jsonrpc', 'rpc.method': distinct.join(','), 'rpc.batch_size': methods.length, 'stableroute.chain': chain },
    },
    send,
  );
}
