// One webhook POST (src/webhook-client/request.ts) against a real HTTP server on loopback: what reaches the receiver, and
// which connections stay open, when an attempt times out on a kept-alive connection.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { postWebhook } from '../../src/webhook-client/request.js';
import { destinationPolicy } from '../../src/webhook-client/destination-guard.js';
import { waitFor } from '../helpers/process.js';

const POLICY = destinationPolicy({ production: false, webhookSsrfGuard: false, webhookAllowedHosts: [] });
const TIMEOUT_MS = 300;
const HEADERS = { 'content-type': 'application/json' };

/**
 * Counts the client sockets this process opens and how many are still open. Node publishes each new client socket
 * synchronously on `net.client.socket`, so a socket opened by a resend is counted before the close that caused it
 * has finished being reported: "none open" cannot be seen between the two.
 */
function clientSockets() {
  const counts = { opened: 0, open: 0 };
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    counts.opened++;
    counts.open++;
    socket.once('close', () => counts.open--);
  };
  subscribe('net.client.socket', onSocket);
  return { counts, stop: () => void unsubscribe('net.client.socket', onSocket) };
}

interface Receiver {
  url: string;
  /** Requests received, by path. */
  requests: Map<string, number>;
  /** Connections the receiver holds open now. */
  open(): number;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Answers 204 on /answered (keep-alive) and never answers /hangs. */
async function receiver(): Promise<Receiver> {
  const requests = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server: Server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    requests.set(req.url ?? '', (requests.get(req.url ?? '') ?? 0) + 1);
    req.resume();
    req.on('end', () => {
      if (req.url === '/answered') res.writeHead(204).end();
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const r: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    open: () => sockets.size,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  cleanups.push(r.close);
  return r;
}

describe('postWebhook: an attempt that times out on a kept-alive connection', () => {
  it('is sent once, ends within its timeout, and its connection is closed on both sides', async () => {
    const target = await receiver();
    const sockets = clientSockets();
    cleanups.push(sockets.stop);

    const first = await postWebhook(`${target.url}/answered`, '{}', HEADERS, TIMEOUT_MS, POLICY);
    expect(first).toMatchObject({ statusCode: 204, error: null });
    // The next attempt to the same address reuses that connection, and the receiver never answers it.
    const started = Date.now();
    const second = await postWebhook(`${target.url}/hangs`, '{}', HEADERS, TIMEOUT_MS, POLICY);
    expect(second).toMatchObject({ statusCode: null, error: `timeout: no response within ${TIMEOUT_MS} ms` });
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_000);

    // Either a resend reaches the receiver, or every connection is gone on both sides; nothing else can happen.
    await waitFor(
      'the attempt to be resent or its connection to close',
      async () => (target.requests.get('/hangs') ?? 0) > 1 || (sockets.counts.open === 0 && target.open() === 0),
      5_000,
      10,
    );
    expect(target.requests.get('/hangs'), 'requests the receiver got for the one attempt').toBe(1);
    expect(sockets.counts).toEqual({ opened: 1, open: 0 });
    expect(target.open()).toBe(0);
  });
});
