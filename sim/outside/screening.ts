// The screening provider the service asks (SCREENING_URL), a real HTTP server on loopback: it denies the addresses
// the simulator has sanctioned so far, allows the rest, and, as the outside fault of issue 37, sometimes never answers
// (the service's SCREENING_TIMEOUT_SECONDS runs out, and SCREENING_FAIL decides). It does not check signatures: the
// provider's own tests do (test/helpers/screening-provider.ts); here it only stands for the outside world's answers.
// Some recipients are flaky (issue 37, decision 216): the provider's lookups of them time out for a minute of every
// two of simulated time, the way one slow backend shard does, so that SCREENING_FAIL=closed is met right before
// signing, not only by the rare random timeout. Every question is recorded with its simulated time and whether it was
// answered, for the invariant that nothing is signed to a recipient the provider did not clear.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FaultPlan } from '../faults/plan.js';

/** A question the provider was asked: the address, the simulated time (ms), whether it answered. */
export interface ScreeningQuestion {
  address: string;
  atMs: number;
  answered: boolean;
}

/** How long a flaky recipient's lookups time out, then answer, in turn (simulated time). */
export const FLAKY_WINDOW_MS = 60_000;

export interface SimScreening {
  url: string;
  /** Every question asked, in order. */
  readonly asked: ScreeningQuestion[];
  /** Sanctioned addresses, each with the simulated time (ms) from which it is denied. */
  readonly sanctioned: Map<string, number>;
  sanction(address: string, atMs: number): void;
  close(): Promise<void>;
}

export async function startScreening(faults: FaultPlan, options: { nowMs: () => number; flaky: ReadonlySet<string> }): Promise<SimScreening> {
  const sanctioned = new Map<string, number>();
  const asked: ScreeningQuestion[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const { address } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { address: string };
      const atMs = options.nowMs();
      // Keyed by the address (a quote's two recipients are screened at once, in either order), and drawn whatever the
      // address, so that the flaky ones do not shift the random timeouts' draws.
      const timedOut = faults.roll('outside.screening_timeout', address);
      const flakyDown = !faults.calm && options.flaky.has(address) && Math.floor(atMs / FLAKY_WINDOW_MS) % 2 === 1;
      if (flakyDown && !timedOut) faults.count('outside.screening_timeout');
      asked.push({ address, atMs, answered: !(timedOut || flakyDown) });
      if (timedOut || flakyDown) return; // never answered: the service's timeout ends it
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ decision: sanctioned.has(address) ? 'deny' : 'allow' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/screen`,
    asked,
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
