// What the rate-limit tests check of an answer over real HTTP: the headers the document declares, and a 429.
import type { IncomingHttpHeaders } from 'node:http';
import { expect } from 'vitest';

export interface LimitedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/** The served /openapi.json, as far as these checks read it. */
export interface DeclaredHeaders {
  paths: Record<string, Record<string, { tags?: string[]; responses: Record<string, { headers?: Record<string, unknown> }> }>>;
}

/** `n` requests one after another (each on its own connection, as `sendOne` makes it). */
export async function calls<A>(n: number, sendOne: (i: number) => Promise<A>): Promise<A[]> {
  const answers: A[] = [];
  for (let i = 0; i < n; i++) answers.push(await sendOne(i));
  return answers;
}

const LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'retry-after', 'access-control-allow-origin'];

/** The answer carries exactly the headers of LIMIT_HEADERS that the document declares for this operation and status. */
export function expectDeclared(document: DeclaredHeaders, answer: LimitedAnswer, path: string, method: string): void {
  const declared = Object.keys(document.paths[path]?.[method]?.responses[String(answer.status)]?.headers ?? {}).map((h) => h.toLowerCase());
  const sent = LIMIT_HEADERS.filter((h) => answer.headers[h] !== undefined);
  expect({ path, method, status: answer.status, headers: sent }).toEqual({ path, method, status: answer.status, headers: LIMIT_HEADERS.filter((h) => declared.includes(h)) });
}

export function expectRateLimited(answer: LimitedAnswer, limit: number): void {
  expect(answer.status).toBe(429);
  expect(answer.body).toEqual({ statusCode: 429, error: 'Too Many Requests', message: expect.stringContaining(`${limit} requests`), code: 'RATE_LIMITED' });
  expect(answer.headers).toMatchObject({ 'x-ratelimit-limit': String(limit), 'x-ratelimit-remaining': '0', 'retry-after': '60' });
}
