// A service that cannot take its port stops: the workers it already started are stopped with it, so the process
// exits 1 with the reason instead of running on with a closed pool (found by starting a second `serve` by mistake).
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { runCommand } from '../helpers/process.js';

let db: TestDatabase;
let taken: Server;
let port: number;

beforeAll(async () => {
  db = await createTestDatabase();
  taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  port = (taken.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise((resolve) => taken?.close(resolve));
  await db?.drop();
});

describe('start-up on a port in use', () => {
  it.each(['serve', 'api'])('stableroute %s exits 1 naming the address, its workers stopped', async (role) => {
    const result = await runCommand([role], { DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1' });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toContain(`EADDRINUSE`);
    expect(result.stderr).toContain(`127.0.0.1:${port}`);
    expect(result.stdout + result.stderr).not.toContain('Cannot use a pool after calling end on the pool');
  }, 60_000);

  it('with ADMIN_PORT in use, serve stops its public listener and workers too', async () => {
    const result = await runCommand(['serve'], { DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', ADMIN_PORT: String(port) });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stderr).toContain(`127.0.0.1:${port}`);
  }, 60_000);
});
