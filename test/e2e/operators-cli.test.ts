// `stableroute operators ...` as an operator runs it, and two `stableroute api` processes on one database: a token
// disabled or rotated out through the CLI is refused by both from the next request (issue 25).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { nonLoopbackAddress, send } from '../helpers/peer.js';
import { freePort, killAll, runCommand, startService, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const PEER = nonLoopbackAddress();
const PRODUCTION = {
  NODE_ENV: 'production',
  API_KEY_SALT: 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687',
  WEBHOOK_SIGNING_SECRET: '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021',
  AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
};

let db: TestDatabase;
const services: ServiceProcess[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await killAll(services);
  await db?.drop();
});

const cli = (args: string[]) => runCommand(args, { ...PRODUCTION, DATABASE_URL: db.url });
const lastLine = (stdout: string) => JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>;

describe('stableroute operators', () => {
  it('creates an operator and prints its token once, as the last line with --json; lists without tokens', async () => {
    const created = await cli(['operators', 'create', '--name', 'Ada Admin', '--role', 'admin', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const ada = lastLine(created.stdout);
    expect(ada).toMatchObject({ operator_id: expect.stringMatching(/^op_/), name: 'Ada Admin', role: 'admin', status: 'active', token: expect.stringMatching(/^sr_op_/) });
    const listed = await cli(['operators', 'list', '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(ada.token as string);
    expect(lastLine(listed.stdout)).toEqual([expect.objectContaining({ operator_id: ada.operator_id, role: 'admin', status: 'active' })]);
    const human = await cli(['operators', 'create', '--name', 'Vic Viewer', '--role', 'viewer']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/token: sr_op_/);
  });

  it('refuses bad usage with exit 2 and an unknown operator with exit 1', async () => {
    for (const args of [['operators', 'create', '--name', 'x', '--role', 'root'], ['operators', 'create', '--role', 'admin'], ['operators', 'disable'], ['operators', 'token', 'spin', 'op_x']]) {
      expect((await cli(args)).code, args.join(' ')).toBe(2);
    }
    const missing = await cli(['operators', 'disable', 'op_missing']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('OPERATOR_NOT_FOUND');
  });

  it('disable and token rotate take effect at once in every api process', async () => {
    const created = lastLine((await cli(['operators', 'create', '--name', 'Otto Operator', '--role', 'operator', '--json'])).stdout);
    const ports = [await freePort(), await freePort()];
    for (const port of ports) {
      const service = startService(['api'], { ...PRODUCTION, DATABASE_URL: db.url, PORT: String(port), LOG_LEVEL: 'warn' });
      services.push(service);
      await waitHealthy(`http://127.0.0.1:${port}`, service);
    }
    const status = async (port: number, token: unknown) =>
      (await send(PEER, PEER, port, 'GET', '/admin/payments', { host: `localhost:${port}`, authorization: `Bearer ${String(token)}` })).status;
    for (const port of ports) expect(await status(port, created.token)).toBe(200);

    const rotated = await cli(['operators', 'token', 'rotate', created.operator_id as string, '--json']);
    expect(rotated.code, rotated.stderr).toBe(0);
    const fresh = lastLine(rotated.stdout).token;
    for (const port of ports) {
      expect(await status(port, created.token)).toBe(401);
      expect(await status(port, fresh)).toBe(200);
    }
    const disabled = await cli(['operators', 'disable', created.operator_id as string, '--json']);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(lastLine(disabled.stdout)).toMatchObject({ status: 'disabled' });
    for (const port of ports) expect(await status(port, fresh)).toBe(401);
    expect((await cli(['operators', 'disable', created.operator_id as string])).code).toBe(1);
  });
});
