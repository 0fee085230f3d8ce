// A webhook receiver on loopback that records when each event arrived, for end-to-end latencies.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Arrival {
  eventType: string;
  paymentIntentId: string;
  /** Wall clock (ms since the epoch) when the POST arrived. */
  at: number;
}

export interface Receiver {
  url: string;
  arrivals: Arrival[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const arrivals: Arrival[] = [];
  const origin = Date.now() - performance.now();
  const server = createServer((req, res) => {
    const at = origin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event_type: string; payment_intent_id: string };
        arrivals.push({ eventType: body.event_type, paymentIntentId: body.payment_intent_id, at });
      } catch {
        // not ours
      }
      res.statusCode = 204;
      res.end();
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
