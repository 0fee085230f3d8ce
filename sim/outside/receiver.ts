// The merchant's webhook receiver, a real HTTP server on loopback, with the outside faults of issue 37: it answers 500
// (fails), never answers until the service's timeout runs out (hangs), or answers late but within the timeout (slow).
// Which request gets which fault is drawn from the receiver's own stream, in the order requests arrive.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultPlan } from '../faults/plan.js';

export interface SimReceiver {
  url: string;
  /** Deliveries answered 2xx, by webhook-id. */
  readonly delivered: Set<string>;
  close(): Promise<void>;
}

export async function startReceiver(faults: FaultPlan, options: { slowMs: number }): Promise<SimReceiver> {
  const delivered = new Set<string>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const id = String(req.headers['webhook-id'] ?? '');
      if (faults.roll('outside.webhook_hangs')) return; // the service's timeout ends it
      if (faults.roll('outside.webhook_fails')) {
        res.statusCode = 500;
        res.end();
        return;
      }
      const answer = () => {
        delivered.add(id);
        res.statusCode = 204;
        res.end();
      };
      if (faults.roll('outside.webhook_slow')) setTimeout(answer, options.slowMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    delivered,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
