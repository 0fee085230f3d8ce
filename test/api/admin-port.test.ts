// With ADMIN_PORT set, /admin/* is served only on that second listener, never on the public one.
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let runtime: Runtime;
beforeAll(async () => {
  db = await createTestDatabase();
  const config = loadConfig({ DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: '0', ADMIN_HOST: '127.0.0.1' });
  runtime = await startRuntime(config, { api: true, workers: false }, { log: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await runtime.stop();
  await db.drop();
});

describe('ADMIN_PORT', () => {
  it('serves /admin/*, /console and /metrics on the admin listener only, /docs on the public one', async () => {
    const { public: publicUrl, admin: adminUrl } = runtime.addresses;
    expect(adminUrl).toBeDefined();
    expect(adminUrl).not.toBe(publicUrl);
    for (const path of ['/admin/overview', '/admin/route-distribution', '/admin/failures']) {
      const onPublic = await fetch(`${publicUrl}${path}`);
      expect(onPublic.status).toBe(404);
      expect(((await onPublic.json()) as { code: string }).code).toBe('NOT_FOUND');
      expect((await fetch(`${adminUrl}${path}`)).status).toBe(200);
    }
    const post = await fetch(`${publicUrl}/admin/chain-health`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chain: 'solana', health_status: 'degraded' }),
    });
    expect(post.status).toBe(404);
    // The console, its live stream and the metrics live where /admin/* lives; the API docs on the public listener.
    for (const path of ['/console', '/console/app.js', '/metrics']) {
      expect((await fetch(`${publicUrl}${path}`)).status, path).toBe(404);
      expect((await fetch(`${adminUrl}${path}`)).status, path).toBe(200);
    }
    expect((await fetch(`${publicUrl}/admin/events`)).status).toBe(404);
    expect((await fetch(`${publicUrl}/docs/json`)).status).toBe(200);
    expect((await fetch(`${adminUrl}/docs/json`)).status).toBe(404);
    // The merchant API stays on the public listener only.
    expect((await fetch(`${adminUrl}/quotes`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${publicUrl}/health`)).status).toBe(200);
  });
});
