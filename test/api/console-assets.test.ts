// GET /console: the page and every file it loads come from the service itself (no CDN), each with its type, the page
// with a Content-Security-Policy that allows nothing from elsewhere; unknown files are a 404 in the error format and
// never reach the file system.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/context.js';

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(async () => t.close());

describe('GET /console', () => {
  it('serves the page with a strict policy, and every module it imports', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/console/' })).statusCode).toBe(200);
    const page = await t.app.inject({ method: 'GET', url: '/console' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("default-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
    expect(page.body).not.toMatch(/https?:\/\//);

    // Follow every import from the page down, the way the browser will.
    const importMap = JSON.parse(/<script type="importmap">([\s\S]*?)<\/script>/.exec(page.body)![1]!).imports as Record<string, string>;
    const queue = ['/console/app.js', '/console/console.css', ...Object.values(importMap)];
    const seen = new Set<string>();
    while (queue.length) {
      const url = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(url.endsWith('.css') ? /^text\/css/ : /^text\/javascript/);
      expect(res.body, url).not.toMatch(/\bfrom\s+['"]https?:/);
      for (const m of res.body.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g)) {
        const specifier = m[1]!;
        queue.push(importMap[specifier] ?? new URL(specifier, `http://x${url}`).pathname);
      }
    }
    expect(seen.size).toBeGreaterThan(10);
  });

  it('revalidates with an ETag', async () => {
    const first = await t.app.inject({ method: 'GET', url: '/console/app.js' });
    const again = await t.app.inject({ method: 'GET', url: '/console/app.js', headers: { 'if-none-match': String(first.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('answers 404 in the error format for anything it does not ship', async () => {
    for (const url of ['/console/nope.js', '/console/../package.json', '/console/%2e%2e/%2e%2e/package.json', '/console/vendor/../../src/config.ts']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code, url).toBe('NOT_FOUND');
    }
  });
});
