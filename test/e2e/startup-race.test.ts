// Five `api` and `worker` processes started at once all come up: on a database that does not exist yet (they race
// in CREATE DATABASE) and on an empty one (they race in migrations and pg-boss queue creation).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { adminDatabaseUrl, databaseUrlFor } from '../helpers/db.js';
import { freePort, killAll, type ServiceProcess, startService, waitFor, waitHealthy } from '../helpers/process.js';

const names: string[] = [];
const processes: ServiceProcess[] = [];

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminDatabaseUrl() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  await killAll(processes);
  await Promise.all(processes.map((p) => p.exited));
  await admin(async (client) => {
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
});

/** Starts 2 `api` and 3 `worker` processes at the same moment and waits until every one is ready. */
async function startFive(url: string): Promise<void> {
  const ports = [await freePort(), await freePort()];
  const env = { DATABASE_URL: url, HOST: '127.0.0.1', LOG_LEVEL: 'info', HEALTH_COLLECT_SECONDS: '5' };
  const started = [
    ...ports.map((port) => ({ port, p: startService(['api'], { ...env, PORT: String(port) }) })),
    ...[0, 1, 2].map(() => ({ port: null, p: startService(['worker'], env) })),
  ];
  processes.push(...started.map((s) => s.p));
  await Promise.all(
    started.map(async ({ port, p }) => {
      if (port !== null) return waitHealthy(`http://127.0.0.1:${port}`, p, 120_000);
      await waitFor(
        `a worker ready (output: ${p.output().slice(-1500)})`,
        async () => {
          if (p.child.exitCode !== null) throw new Error(`worker exited ${p.child.exitCode}: ${p.output().slice(-1500)}`);
          return p.output().includes('stableroute ready');
        },
        120_000,
        200,
      );
    }),
  );
  for (const { p } of started) {
    p.child.kill('SIGTERM');
    expect(await p.exited, p.output().slice(-1500)).toBe(0);
  }
}

describe('concurrent start-up', () => {
  it('five processes on a database that does not exist yet all come up', { timeout: 240_000 }, async () => {
    const name = `sr_test_race_${randomBytes(5).toString('hex')}`;
    names.push(name);
    await startFive(databaseUrlFor(name));
  });

  it('five processes on an empty database all come up, and again on the prepared one', { timeout: 240_000 }, async () => {
    const name = `sr_test_race_${randomBytes(5).toString('hex')}`;
    names.push(name);
    await admin((client) => client.query(`CREATE DATABASE ${name}`));
    await startFive(databaseUrlFor(name));
    await startFive(databaseUrlFor(name));
    const queues = await admin(async () => {
      const client = new pg.Client({ connectionString: databaseUrlFor(name) });
      await client.connect();
      try {
        return (await client.query<{ name: string }>('SELECT name FROM pgboss.queue ORDER BY name')).rows.map((r) => r.name);
      } finally {
        await client.end();
      }
    });
    expect(queues).toEqual(['payment-execute', 'payment-execute-dead']);
  });
});
