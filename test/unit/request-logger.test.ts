// The request logger is built on its first enabled call, and then logs exactly what pino's child would have.
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { lazyRequestLogger } from '../../src/api/request-logger.js';

function capture(level: string): { log: pino.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  // The service's own redaction paths, on a stream of our own.
  const log = pino({ level, redact: { paths: ['*.apiKey', 'apiKey'], censor: '[redacted]' } }, stream);
  return { log, lines: () => chunks.join('').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('lazyRequestLogger', () => {
  it('builds no child for calls below the level, and one child, with the bindings, at the first enabled call', () => {
    const { log, lines } = capture('warn');
    const child = vi.spyOn(log, 'child');
    const lazy = lazyRequestLogger(log, { reqId: 'req-1' }, {});
    lazy.info({ apiKey: 'sk_live' }, 'not at this level');
    lazy.debug('nor this');
    expect(child).not.toHaveBeenCalled();
    expect(lazy.level).toBe('warn');

    lazy.warn({ detail: { apiKey: 'sk_live' } }, 'first');
    lazy.error('second');
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines()).toEqual([
      expect.objectContaining({ reqId: 'req-1', msg: 'first', detail: { apiKey: '[redacted]' }, level: 40 }),
      expect.objectContaining({ reqId: 'req-1', msg: 'second', level: 50 }),
    ]);
    // Once built, the child's own level rules, as pino's child would.
    lazy.level = 'debug';
    lazy.debug('now logged');
    expect(lines().at(-1)).toMatchObject({ reqId: 'req-1', msg: 'now logged' });
    expect(log.level).toBe('warn');
  });

  it("is Fastify's request logger: a 500 is logged with the request's id, a 200 builds nothing", async () => {
    const { log, lines } = capture('warn');
    const app = Fastify({ loggerInstance: log as FastifyBaseLogger, childLoggerFactory: lazyRequestLogger });
    app.get('/ok', async () => ({ ok: true }));
    app.get('/boom', async () => {
      throw new Error('kaboom');
    });
    await app.ready();
    const child = vi.spyOn(log, 'child');
    expect((await app.inject('/ok')).statusCode).toBe(200);
    expect(child).not.toHaveBeenCalled();
    expect((await app.inject('/boom')).statusCode).toBe(500);
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines()).toEqual([expect.objectContaining({ level: 50, reqId: expect.stringMatching(/^req-/), err: expect.objectContaining({ message: 'kaboom' }) })]);
    await app.close();
  });
});
