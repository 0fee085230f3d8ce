// Requests Node's HTTP parser refuses, sent over a raw socket to a listening app: they answer in the spec's error
// body with a code, and the connection is closed.
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';

let t: TestContext;
let port: number;
beforeAll(async () => {
  t = await createTestContext();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => t.close());

/** Writes raw bytes and reads everything until the server closes the connection. */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(answer));
    socket.write(request);
  });
}

function parse(answer: string): { status: number; headers: string; body: unknown } {
  const [head, body] = answer.split('\r\n\r\n', 2) as [string, string];
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(body) };
}

describe('HTTP parser errors', () => {
  it('400 MALFORMED_REQUEST for bad framing (Content-Length and chunked together)', async () => {
    const answer = parse(
      await raw('POST /quotes HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    );
    expect(answer.status).toBe(400);
    expect(answer.headers).toContain('content-type: application/json');
    expect(answer.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.any(String), code: 'MALFORMED_REQUEST' });
  });

  it('400 MALFORMED_REQUEST for a header with an invalid character', async () => {
    const answer = parse(await raw('GET /health HTTP/1.1\r\nHost: localhost\r\nX-Bad\u0001: 1\r\n\r\n'));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ statusCode: 400, code: 'MALFORMED_REQUEST' });
  });

  it('431 HEADERS_TOO_LARGE for headers over 16 KiB', async () => {
    const answer = parse(await raw(`GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`));
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({
      statusCode: 431,
      error: 'Request Header Fields Too Large',
      message: expect.any(String),
      code: 'HEADERS_TOO_LARGE',
    });
  });

  it('400 MALFORMED_REQUEST for an HTTP/1.1 request without a Host header, on any route', async () => {
    for (const request of ['GET /health HTTP/1.1\r\n\r\n', 'GET /no/such/route HTTP/1.1\r\n\r\n', 'POST /admin/chain-health HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}']) {
      const text = await raw(request);
      expect(text, request).toMatch(/^HTTP\/1\.1 400 /);
      const answer = parse(text);
      expect(answer.headers).toContain('content-type: application/json');
      expect(answer.headers).toContain('connection: close');
      expect(answer.body).toEqual({ statusCode: 400, error: 'Bad Request', message: 'An HTTP/1.1 request must carry a Host header', code: 'MALFORMED_REQUEST' });
    }
    // HTTP/1.0 has no Host header to require.
    expect(parse(await raw('GET /health HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('a well-formed request on the same listener still works', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });
});
