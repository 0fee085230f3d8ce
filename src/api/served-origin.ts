// Access-Control-Allow-Origin on every answer: the origin the answer was served from, so that no page of another
// origin may read it (decision 218). The service offers no cross-origin access: the console is served from the admin
// listener itself, and merchants call from their servers, where CORS does not apply. A browser reads a cross-origin
// answer only when this header is `*` or that page's own origin; a same-origin page needs no header at all.
// Never `*` (a page on any site could read what loopback, trusted in development, answers), never the request's
// Origin echoed back, and never `null` (the origin of sandboxed frames and file: pages, which it would let read).
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** A Host header that is a host name or address and an optional port: nothing else goes into the header. */
const HOST = /^(?:\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;

/** `http://127.0.0.1:3000`: the scheme the request came in on (no trustProxy: the socket's) and the Host it named. */
export function servedOriginOf(request: FastifyRequest): string {
  const host = request.headers.host;
  if (host !== undefined && HOST.test(host)) return `${request.protocol}://${host.toLowerCase()}`;
  // No usable Host (HTTP/1.0, or a malformed one answered 400): the listener's own address.
  const address = request.socket.localAddress ?? '127.0.0.1';
  const bracketed = address.includes(':') ? `[${address}]` : address;
  return `${request.protocol}://${bracketed}:${request.socket.localPort ?? 0}`;
}

export function registerServedOrigin(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('access-control-allow-origin', servedOriginOf(request));
  });
}
