// Requests from a chosen local address: this machine's non-loopback address is a peer other than loopback without a
// second host, so who-may-call checks are tested over real sockets, not only through inject().
import { request, type IncomingHttpHeaders } from 'node:http';
import { networkInterfaces } from 'node:os';

/** This machine's first non-loopback IPv4 address: a peer other than loopback without a second host. */
export function nonLoopbackAddress(): string {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const a of addresses ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('this test needs a non-loopback IPv4 address on this machine (none found in os.networkInterfaces())');
}

export interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: { code?: string; [k: string]: unknown };
}

/** One HTTP request from `from` (the client socket's own address) to `to`:port. */
export function send(
  from: string,
  to: string,
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
  options: { statusOnly?: boolean } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: to,
        port,
        method,
        path,
        localAddress: from,
        headers: { ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      },
      (res) => {
        if (options.statusOnly) {
          // A stream that never ends (server-sent events): its status is the answer.
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: {} });
          res.destroy();
          return;
        }
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let parsed: Answer['body'] = {};
          try {
            parsed = JSON.parse(text) as Answer['body'];
          } catch {
            // not JSON (the console's page): status is what matters
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

