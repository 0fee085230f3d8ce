// `stableroute serve` as operators run it, and a receiver on one host that answers one merchant's endpoint and never
// answers another's: the second merchant's test webhook reuses the first one's kept-alive connection and times out.
// The attempt reaches the receiver once, its connection is closed, and SIGTERM still stops the service with exit 0.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, runCommand, waitFor, waitHealthy } from '../helpers/process.js';
import { serviceFixture } from '../helpers/service-fixture.js';

const fx = serviceFixture('e2e-webhook-timeout-secret-0123456789');
const TIMEOUT_SECONDS = 1;
/** How long a stopping service may take: its steps are bounded by seconds, not by a receiver that never answers. */
const STOP_DEADLINE_MS = 15_000;

/** /answered gets a 204 on a kept-alive connection; /hangs is read and never answered. */
async function hangingReceiver() {
  const requests = { answered: 0, hangs: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    if (req.url === '/answered') {
      requests.answered++;
      req.on('end', () => res.writeHead(204).end());
    } else requests.hangs++;
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    requests,
    open: () => sockets.size,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let receiver: Awaited<ReturnType<typeof hangingReceiver>> | undefined;
afterAll(async () => receiver?.close());

async function createMerchant(name: string, webhookUrl: string): Promise<{ id: string; key: string }> {
  const result = await runCommand(['merchants', 'create', '--name', name, '--webhook-url', webhookUrl, '--json'], { DATABASE_URL: fx.db.url });
  expect(result.code, result.stderr).toBe(0);
  const line = JSON.parse(result.stdout.trim().split('\n').at(-1)!) as { merchant_id: string; api_key: string };
  return { id: line.merchant_id, key: line.api_key };
}

describe('a webhook attempt that times out on a kept-alive connection', () => {
  it('reaches the receiver once, closes its connection, and SIGTERM still exits 0', async () => {
    receiver = await hangingReceiver();
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = fx.start(['serve'], {
      DATABASE_URL: fx.db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      WEBHOOK_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
      // No retry while the test runs: every attempt is one of the test's.
      WEBHOOK_RETRY_DELAY_SECONDS: '3600',
    });
    await waitHealthy(base, service);
    const answered = await createMerchant('Answered', `${receiver.base}/answered`);
    const hanging = await createMerchant('Hanging', `${receiver.base}/hangs`);
    const test = async (key: string) =>
      (await (await fetch(`${base}/webhooks/test`, { method: 'POST', headers: { 'x-api-key': key } })).json()) as Record<string, unknown>;

    // Within the kept connection's idle window (4 s): the second test reuses the first one's connection.
    expect(await test(answered.key)).toMatchObject({ delivered: true, status_code: 204 });
    const started = Date.now();
    expect(await test(hanging.key)).toMatchObject({ delivered: false, status_code: null, error: expect.stringMatching(/^timeout/) });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_SECONDS * 1000 + 2_000);

    // Either a resend reaches the receiver, or the attempt's connection is closed; nothing else can happen.
    await waitFor('the attempt to be resent or its connection to close', async () => receiver!.requests.hangs > 1 || receiver!.open() === 0, 10_000, 20);
    const attempts = await fx.db.pool.query<{ n: number }>(
      'SELECT COUNT(*)::int AS n FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE e.merchant_id = $1',
      [hanging.id],
    );
    expect(attempts.rows[0]!.n).toBe(1);
    expect(receiver.requests.hangs, 'requests the hanging endpoint got for its one attempt').toBe(1);
    expect(receiver.open()).toBe(0);

    service.child.kill('SIGTERM');
    const code = await Promise.race([
      service.exited,
      new Promise<string>((resolve) => setTimeout(() => resolve(`still running ${STOP_DEADLINE_MS} ms after SIGTERM`), STOP_DEADLINE_MS).unref()),
    ]);
    expect(code, service.output().slice(-2000)).toBe(0);
  });
});
