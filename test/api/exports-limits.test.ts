// The exports' bounds over real sockets, with clients that stop reading (their exports stay open, held by the full
// socket): at most EXPORTS_AT_ONCE_MAX run at once in a process (the next is 503 with Retry-After, and a slot frees
// when a client goes away), and a shutdown cuts running exports short instead of waiting for them: their clients see
// an incomplete transfer, never a file that looks whole.
import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORTS_AT_ONCE_MAX } from '../../src/bounds.js';
import { insertBulkPayments } from '../helpers/bulk.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { waitFor } from '../helpers/process.js';

let t: TestContext;
let base: string;
/** Far more CSV than loopback socket buffers hold (about 25 MB), so an unread export stays open. */
const BULK_PAYMENTS = 80_000;

beforeAll(async () => {
  t = await createTestContext();
  await insertBulkPayments(t.db.pool, 'mer_bulk', BULK_PAYMENTS, { startIso: '2026-03-01T00:00:00Z', stepMs: 1000 });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}, 60_000);
afterAll(async () => t.close());

interface Held {
  response: IncomingMessage;
  /** Resolves with how the body ended: `complete`, or `cut` when the connection closed before the last chunk. */
  ended: Promise<'complete' | 'cut'>;
  abort(): void;
}

/** Starts an export and reads none of it once its headers arrived (the socket fills, and the server waits). */
async function hold(path: string): Promise<Held> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, (response) => {
      response.pause();
      const ended = new Promise<'complete' | 'cut'>((done) => {
        response.once('end', () => done('complete'));
        response.once('error', () => done('cut'));
        response.once('aborted', () => done('cut'));
        response.once('close', () => done(response.complete ? 'complete' : 'cut'));
      });
      resolve({ response, ended, abort: () => req.destroy() });
    });
    req.once('error', reject);
    req.end();
  });
}

const exportedPages = async () =>
  (await t.db.pool.query<{ n: number }>("SELECT COUNT(*)::int AS n FROM audit_log WHERE action = 'export.payments'")).rows[0]!.n;

describe('exports over real sockets', () => {
  it('runs at most EXPORTS_AT_ONCE_MAX at once; the next is 503 with Retry-After until a client goes away', async () => {
    const held: Held[] = [];
    for (let i = 0; i < EXPORTS_AT_ONCE_MAX; i++) held.push(await hold('/admin/exports/payments.csv?merchant_id=mer_bulk'));
    expect(held.map((h) => h.response.statusCode)).toEqual(Array(EXPORTS_AT_ONCE_MAX).fill(200));
    expect(await exportedPages()).toBe(EXPORTS_AT_ONCE_MAX);

    const refused = await fetch(`${base}/admin/exports/ledger.csv`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ statusCode: 503, code: 'SERVICE_UNAVAILABLE' });
    // Refused before the export opened: no audit record of an export that never ran.
    expect(await exportedPages()).toBe(EXPORTS_AT_ONCE_MAX);

    held[0]!.abort();
    const small = await waitFor('a free export slot', async () => {
      const res = await fetch(`${base}/admin/exports/payments.csv?merchant_id=mer_test`);
      return res.status === 200 ? res.text() : null;
    }, 10_000, 20);
    expect(small.split('\r\n')[0]).toMatch(/^payment_id,/);

    // A shutdown cuts the held exports short instead of waiting for their clients.
    await t.app.close();
    const endings = await Promise.all(held.slice(1).map((h) => (h.response.resume(), h.ended)));
    expect(endings).toEqual(Array(EXPORTS_AT_ONCE_MAX - 1).fill('cut'));
  }, 60_000);
});
