// A JSON-RPC pass-through that a test can take down: while down it holds every request unanswered, as an
// overloaded or partitioned node does, so clients see timeouts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RpcProxy {
  url: string;
  down: boolean;
  /** JSON-RPC methods held unanswered (and never passed on) even while up, e.g. a send that never gets through. */
  holdMethods: Set<string>;
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

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const held: ServerResponse[] = [];
  const proxy: RpcProxy = { url: '', down: false, holdMethods: new Set(), held: [], close: async () => undefined };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const method = methodOf(Buffer.concat(chunks));
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
