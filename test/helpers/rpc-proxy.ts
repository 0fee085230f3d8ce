// A JSON-RPC pass-through that a test can take down: while down it holds every request unanswered, as an
// overloaded or partitioned node does, so clients see timeouts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcProxy {
  url: string;
  down: boolean;
  /** JSON-RPC methods held unanswered (and never passed on) even while up, e.g. a send that never gets through. */
  holdMethods: Set<string>;
  /** JSON-RPC methods answered at once with a JSON-RPC error (and never passed on), as a node that refuses them. */
  refuseMethods: Set<string>;
  /** Requests held so far, by method. */
  held: string[];
  close(): Promise<void>;
}

function methodOf(body: Buffer): string {
  try {
    return String((JSON.parse(body.toString('utf8')) as { method?: unknown }).method ?? '');
  } catch {
    return '';
  }
}

type RpcCall = { id?: unknown; method?: unknown };

/**
 * The answer to a request (one call or a JSON-RPC batch) some of whose calls are refused: those get an error, the
 * others are passed on (as one batch) and answered as the node answers them. Null when no call is refused.
 */
async function refuseSome(methods: ReadonlySet<string>, body: Buffer, target: string): Promise<string | null> {
  let parsed: RpcCall | RpcCall[];
  try {
    parsed = JSON.parse(body.toString('utf8')) as RpcCall | RpcCall[];
  } catch {
    return null;
  }
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  const isRefused = (call: RpcCall) => methods.has(String(call.method));
  if (!calls.some(isRefused)) return null;
  const passed = calls.filter((call) => !isRefused(call));
  const answers = new Map<unknown, unknown>();
  if (passed.length > 0) {
    const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(passed) });
    for (const answer of (await upstream.json()) as { id?: unknown }[]) answers.set(answer.id, answer);
  }
  const replies = calls.map((call) =>
    isRefused(call)
      ? { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32000, message: `${String(call.method)} refused by the test proxy` } }
      : answers.get(call.id),
  );
  return JSON.stringify(Array.isArray(parsed) ? replies : replies[0]);
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const held: ServerResponse[] = [];
  const proxy: RpcProxy = { url: '', down: false, holdMethods: new Set(), refuseMethods: new Set(), held: [], close: async () => undefined };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const method = methodOf(Buffer.concat(chunks));
      if (!proxy.down && proxy.refuseMethods.size > 0) {
        const refused = await refuseSome(proxy.refuseMethods, Buffer.concat(chunks), target);
        if (refused !== null) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(refused);
          return;
        }
      }
      if (proxy.down || proxy.holdMethods.has(method)) {
        held.push(res);
        proxy.held.push(method);
        return;
      }
      try {
        const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
        res.writeHead(upstream.status, { 'content-type': 'application/json' });
        res.end(Buffer.from(await upstream.arrayBuffer()));
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
