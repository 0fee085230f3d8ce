// The screening provider the service asks (SCREENING_URL), a real HTTP server on loopback: it denies the addresses
// the simulator has sanctioned so far, allows the rest, and, as the outside fault of issue 37, sometimes never answers
// (the service's SCREENING_TIMEOUT_SECONDS runs out, and SCREENING_FAIL decides). It does not check signatures: the
// provider's own tests do (test/helpers/screening-provider.ts); here it only stands for the outside world's answers.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultPlan } from '../faults/plan.js';

export interface SimScreening {
  url: string;
  /** Sanctioned addresses, each with the simulated time (ms) from which it is denied. */
  readonly sanctioned: Map<string, number>;
  sanction(address: string, atMs: number): void;
  close(): Promise<void>;
}

export async function startScreening(faults: FaultPlan): Promise<SimScreening> {
  const sanctioned = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { address } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { address: string };
      // Keyed by the address: a quote's two recipients are screened at once, in either order.
      if (faults.roll('outside.screening_timeout', address)) return; // never answered: the service's timeout ends it
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ decision: sanctioned.has(address) ? 'deny' : 'allow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/screen`,
    sanctioned,
    sanction: (address, atMs) => {
      if (!sanctioned.has(address)) sanctioned.set(address, atMs);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
