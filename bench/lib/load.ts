// Load generators over real HTTP on loopback. Closed loop: N clients, each sends its next request when the last one
// answered (measures capacity). Open loop: requests start at a fixed rate whatever the answers do (measures latency
// at a given load, and whether the service keeps up).
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { percentile as nearestRank } from '../../src/domain/health.js';

/** Keep-alive connections, as a merchant's HTTP client would hold them. */
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

export interface Outcome {
  status: number;
  body: string;
}

export function send(method: 'GET' | 'POST', url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Outcome> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers: payload === undefined ? headers : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export function closeConnections(): void {
  agent.destroy();
}

export interface LoadResult {
  name: string;
  requests: number;
  errors: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** The service's own nearest-rank percentile (src/domain/health.ts); 0 for no values. */
export function percentile(values: readonly number[], p: number): number {
  return nearestRank(values, p) ?? 0;
}

function summarise(name: string, latencies: number[], errors: number, seconds: number): LoadResult {
  return {
    name,
    requests: latencies.length,
    errors,
    seconds: round(seconds, 2),
    perSecond: round(latencies.length / seconds, 0),
    p50Ms: round(percentile(latencies, 50), 1),
    p99Ms: round(percentile(latencies, 99), 1),
  };
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** `concurrency` clients for `seconds`; `fire(i)` resolves true when the answer was the one expected. */
export async function closedLoop(name: string, concurrency: number, seconds: number, fire: (i: number) => Promise<boolean>): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const i = next++;
        const t0 = performance.now();
        const ok = await fire(i).catch(() => false);
        latencies.push(performance.now() - t0);
        if (!ok) errors++;
      }
    }),
  );
  return summarise(name, latencies, errors, (performance.now() - started) / 1000);
}

/** Starts `fire(i)` `perSecond` times a second for `seconds`, whatever the answers do; `onTick` runs every second. */
export async function openLoop(
  name: string,
  perSecond: number,
  seconds: number,
  fire: (i: number) => Promise<boolean>,
  onTick?: (elapsedSeconds: number) => void,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  const inFlight: Promise<void>[] = [];
  const started = performance.now();
  const total = Math.round(perSecond * seconds);
  let lastTick = 0;
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / perSecond;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    const elapsed = Math.floor((performance.now() - started) / 1000);
    if (elapsed > lastTick) {
      lastTick = elapsed;
      onTick?.(elapsed);
    }
    const t0 = performance.now();
    inFlight.push(
      fire(i)
        .catch(() => false)
        .then((ok) => {
          latencies.push(performance.now() - t0);
          if (!ok) errors++;
        }),
    );
  }
  await Promise.all(inFlight);
  return summarise(name, latencies, errors, (performance.now() - started) / 1000);
}
