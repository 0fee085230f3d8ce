// Production on a database without a synchronous standby (issue 36, decision 201): a failover there can lose
// acknowledged commits, so `serve` says so at start-up and the operator alert `database_not_synchronous` (no chain) is
// raised; on a primary whose commits wait for a synchronous standby, nothing is said and an alert left open resolves.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, killAll, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replicated-postgres.js';

const PRODUCTION = {
  NODE_ENV: 'production',
  API_KEY_SALT: 'f0c1d2e3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a59687',
  WEBHOOK_SIGNING_SECRET: '9a8b7c6d5e4f30211203f4e5d6c7b8a99a8b7c6d5e4f3021',
  ADMIN_TOKEN: '4c1f9e7d2b8a6053e1f7c9d4b2a80e6f3d5c7b9a1e2f4d6c',
  AUDIT_KEY: '7e3a9c1f5b2d8e4a6c0f9b3d7e1a5c2f8b4d6e0a9c3f7b1d',
  BOOKS_CHECK_SECONDS: '0.2',
};

let db: TestDatabase;
let pair: ReplicatedPostgres;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  [db, pair] = await Promise.all([createTestDatabase(), startReplicatedPostgres({ synchronous: true })]);
}, 120_000);
afterAll(async () => {
  await killAll(processes);
  await db?.drop();
  await pair?.remove();
});

async function openAlerts(url: string): Promise<{ chain: string | null; message: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query("SELECT chain, message FROM operator_alerts WHERE kind = 'database_not_synchronous' AND status = 'open'")).rows;
  } finally {
    await client.end();
  }
}

async function serve(url: string): Promise<{ service: ServiceProcess; base: string }> {
  const port = await freePort();
  const service = startService(['serve'], { ...PRODUCTION, DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1' });
  processes.push(service);
  const base = `http://127.0.0.1:${port}`;
  await waitHealthy(base, service, 120_000);
  return { service, base };
}

describe('production and the database replication', () => {
  it('warns at start-up and raises database_not_synchronous on a database with no synchronous standby', async () => {
    const { service, base } = await serve(db.url);
    expect(service.output()).toContain('the database has no synchronous standby');
    const alerts = await openAlerts(db.url);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]!.chain).toBeNull();
    expect(alerts[0]!.message).toContain('synchronous_standby_names is empty');
    const listed = (await (await fetch(`${base}/admin/alerts?status=open`, { headers: { authorization: `Bearer ${PRODUCTION.ADMIN_TOKEN}` } })).json()) as {
      data: { kind: string }[];
    };
    expect(listed.data.map((a) => a.kind)).toContain('database_not_synchronous');
  });

  it('says nothing on a primary with a synchronous standby, and resolves an alert left open', async () => {
    const url = pair.urls.primary;
    // An alert from before the standby was made synchronous (the migrations first, as the service applies them).
    const first = await serve(url);
    first.service.child.kill('SIGTERM');
    await first.service.exited;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      `INSERT INTO operator_alerts (id, kind, chain, message, status, first_seen_at, last_seen_at)
       VALUES ('alt_left_open', 'database_not_synchronous', NULL, 'from before', 'open', now(), now())`,
    );
    await client.end();
    const { service } = await serve(url);
    expect(service.output()).not.toContain('no synchronous standby');
    await waitFor('the alert resolved', async () => (await openAlerts(url)).length === 0, 30_000);
  });
});
