// A JSON-RPC pass-through that a test can take down: while down it holds every request unanswered, as an
// overloaded or partitioned node does, so clients see timeouts. It can also answer chosen methods itself, as a
// load-balanced endpoint with one misbehaving or lagging backend does: with a given error (and the call passed on
// or not), or with `null` (a lookup that has not caught up).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The proxy's own answer to a method: a JSON-RPC error, and whether the call still reaches the node. */
export interface RpcErrorAnswer {
  code: number;
  message: string;
  /** Passed on to the node (its answer is dropped), as a backend that took the call and answered wrongly. */
  passOn: boolean;
}

export interface RpcProxy {
  url: string;
  down: boolean;
  /** JSON-RPC methods held unanswered (and never passed on) even while up, e.g. a send that never gets through. */
  holdMethods: Set<string>;
  /** JSON-RPC methods answered at once with a JSON-RPC error (and never passed on), as a node that refuses them. */
  refuseMethods: Set<string>;
  /** JSON-RPC methods answered with the given error; see RpcErrorAnswer.passOn. */
  errorMethods: Map<string, RpcErrorAnswer>;
  /** JSON-RPC methods answered with a `null` result (never passed on): "not found", as a lagging backend says. */
  nullMethods: Set<string>;
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
type OwnAnswer = { passOn: boolean; reply: (call: RpcCall) => unknown };

function ownAnswerOf(proxy: RpcProxy, method: string): OwnAnswer | null {
  const error = (code: number, message: string) => (call: RpcCall) => ({ jsonrpc: '2.0', id: call.id ?? null, error: { code, message } });
  if (proxy.refuseMethods.has(method)) return { passOn: false, reply: error(-32000, `${method} refused by the test proxy`) };
  const answer = proxy.errorMethods.get(method);
  if (answer) return { passOn: answer.passOn, reply: error(answer.code, answer.message) };
  if (proxy.nullMethods.has(method)) return { passOn: false, reply: (call) => ({ jsonrpc: '2.0', id: call.id ?? null, result: null }) };
  return null;
}

/**
 * The answer to a request (one call or a JSON-RPC batch) some of whose calls the proxy answers itself: those get its
 * answer (passed on first where it says so), the others are passed on (as one batch) and answered as the node
 * answers them. Null when the proxy answers no call of it.
 */
async function answerSome(proxy: RpcProxy, body: Buffer, target: string): Promise<string | null> {
  let parsed: RpcCall | RpcCall[];
  try {
    parsed = JSON.parse(body.toString('utf8')) as RpcCall | RpcCall[];
  } catch {
    return null;
  }
  const calls = Array.isArray(parsed) ? parsed : [parsed];
  const own = calls.map((call) => ownAnswerOf(proxy, String(call.method)));
  if (own.every((answer) => answer === null)) return null;
  const passed = calls.filter((_, i) => own[i] === null || own[i]!.passOn);
  const answers = new Map<unknown, unknown>();
  if (passed.length > 0) {
    const upstream = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(passed) });
    for (const answer of (await upstream.json()) as { id?: unknown }[]) answers.set(answer.id, answer);
  }
  const replies = calls.map((call, i) => (own[i] ? own[i].reply(call) : answers.get(call.id)));
  return JSON.stringify(Array.isArray(parsed) ? replies : replies[0]);
}

export async function startRpcProxy(target: string): Promise<RpcProxy> {
  const held: ServerResponse[] = [];
  const proxy: RpcProxy = {
    url: '',
    down: false,
    holdMethods: new Set(),
    refuseMethods: new Set(),
    errorMethods: new Map(),
    nullMethods: new Set(),
    held: [],
    close: async () => undefined,
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const method = methodOf(Buffer.concat(chunks));
      if (!proxy.down && proxy.refuseMethods.size + proxy.errorMethods.size + proxy.nullMethods.size > 0) {
        const answered = await answerSome(proxy, Buffer.concat(chunks), target);
        if (answered !== null) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(answered);
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
