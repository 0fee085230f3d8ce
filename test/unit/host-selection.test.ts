// DATABASE_URL with several hosts, as libpq reads it (decision 193): the configuration accepts it and refuses what a
// writer cannot use; each session lands on the server target_session_attrs asks for, whatever the order of the list;
// a session on a server that turns read-only is dropped, not reused; no writable server is an outage (a 503), not a
// bug. Against a primary and a streaming standby of the test's own (never the shared server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { ConfigError, loadConfig } from '../../src/config.js';
import { connectionTarget } from '../../src/db/connection-target.js';
import { parseDatabaseUrl } from '../../src/db/database-url.js';
import { ensureDatabase } from '../../src/db/ensure-database.js';
import { isDatabaseUnavailable } from '../../src/db/outage.js';
import { createPool, withTransaction } from '../../src/db/pool.js';
import { refusal } from '../helpers/config.js';
import { waitFor } from '../helpers/process.js';
import { startReplicatedPostgres, type ReplicatedPostgres } from '../helpers/replicated-postgres.js';

describe('DATABASE_URL with several hosts (configuration)', () => {
  it('is accepted as libpq writes it: ports or the default one, IPv6 in brackets; read-write unless it says primary', () => {
    const url = 'postgres://u:p@h1:5432,h2:5433,[::1],h4/db?sslmode=disable';
    const parsed = parseDatabaseUrl(url);
    expect(parsed.ok && parsed.url.hosts.map((h) => [h.host, h.port])).toEqual([
      ['h1', 5432],
      ['h2', 5433],
      ['::1', 5432],
      ['h4', 5432],
    ]);
    expect(parsed.ok && parsed.url.hostUrl(parsed.url.hosts[2]!)).toBe('postgres://u:p@[::1]:5432/db?sslmode=disable');
    expect(loadConfig({ DATABASE_URL: url }).databaseUrl).toBe(`${url}&target_session_attrs=read-write`);
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h1,h2/db' }).databaseUrl).toBe('postgres://u@h1,h2/db?target_session_attrs=read-write');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h1,h2/db?target_session_attrs=primary' }).databaseUrl).toContain('primary');
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h1/db' }).databaseUrl).toBe('postgres://u@h1/db');
  });

  it.each([
    ['postgres://u:secret-pw@h1:5432,h2:5433/db?target_session_attrs=prefer-standby', 'could land on a standby'],
    ['postgres://u:secret-pw@h1,h2/db?target_session_attrs=any', 'could land on a standby'],
    ['postgres://u:secret-pw@h1,h2/db?target_session_attrs=read-only', 'could land on a standby'],
    ['postgres://u:secret-pw@h1,h2/db?target_session_attrs=sometimes', 'target_session_attrs must be one of'],
    ['postgres://u:secret-pw@h1:99999,h2/db', 'port'],
    ['postgres://u:secret-pw@h1,[::1/db', 'host'],
    ['postgres://u:secret-pw@h1,h2/db?host=h3', 'host list'],
    ['mysql://u:secret-pw@h1/db', 'PostgreSQL URL'],
  ])('%s is refused with a message that names the problem, never the password', (url, problem) => {
    const thrown = refusal({ DATABASE_URL: url });
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown.variable).toBe('DATABASE_URL');
    expect(thrown.message).toContain(problem);
    expect(thrown.message).not.toContain('secret-pw');
  });
});

describe('host selection against a primary and a standby', () => {
  let pair: ReplicatedPostgres;
  let ports: { primary: string; standby: string };

  beforeAll(async () => {
    pair = await startReplicatedPostgres({ synchronous: false });
    ports = { primary: new URL(pair.urls.primary).port, standby: new URL(pair.urls.standby).port };
  });
  afterAll(async () => {
    await pair?.remove();
  });

  /** Both servers, in the order given, with `attrs`. */
  const both = (first: 'primary' | 'standby', attrs: string) => {
    const order = first === 'primary' ? [ports.primary, ports.standby] : [ports.standby, ports.primary];
    return `postgres://postgres@127.0.0.1:${order[0]},127.0.0.1:${order[1]}/postgres?target_session_attrs=${attrs}`;
  };
  async function landsOn(url: string): Promise<'primary' | 'standby'> {
    const client = connectionTarget(url).client();
    await client.connect();
    try {
      return (await client.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r ? 'standby' : 'primary';
    } finally {
      await client.end();
    }
  }

  it('lands each session on the server target_session_attrs asks for, whatever the order of the list', async () => {
    for (const first of ['primary', 'standby'] as const) {
      expect(await landsOn(both(first, 'read-write')), `read-write, ${first} first`).toBe('primary');
      expect(await landsOn(both(first, 'primary')), `primary, ${first} first`).toBe('primary');
      expect(await landsOn(both(first, 'read-only')), `read-only, ${first} first`).toBe('standby');
      expect(await landsOn(both(first, 'standby')), `standby, ${first} first`).toBe('standby');
      expect(await landsOn(both(first, 'prefer-standby')), `prefer-standby, ${first} first`).toBe('standby');
      expect(await landsOn(both(first, 'any')), `any, ${first} first`).toBe(first);
    }
    // A host that refuses connections is passed over.
    const dead = `postgres://postgres@127.0.0.1:1,127.0.0.1:${ports.standby},127.0.0.1:${ports.primary}/postgres?target_session_attrs=read-write`;
    expect(await landsOn(dead)).toBe('primary');
  });

  it('pools, pg-boss-style pools and LISTEN-style clients of one URL all reach the primary; ensureDatabase creates there', async () => {
    const url = both('standby', 'read-write').replace('/postgres?', '/sr_created_here?');
    await ensureDatabase(url);
    const pool = createPool(url, 2);
    try {
      const { rows } = await pool.query<{ r: boolean; db: string }>('SELECT pg_is_in_recovery() AS r, current_database() AS db');
      expect(rows).toEqual([{ r: false, db: 'sr_created_here' }]);
      const listener = pool.target.client({ ...pool.options, application_name: 'listen-test' });
      await listener.connect();
      expect((await listener.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r).toBe(false);
      await listener.end();
    } finally {
      await pool.end();
    }
  });

  it('drops a session whose server turned read-only; with no writable server left, connecting is an outage, not a bug', async () => {
    const admin = new pg.Client({ connectionString: pair.urls.primary });
    await admin.connect();
    const pool = createPool(both('primary', 'read-write'), 1);
    try {
      await pool.query('CREATE TABLE IF NOT EXISTS fenced (n int)');
      const before = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      // Fencing a primary (what a failover tool does to an old primary it cannot stop): new transactions are read-only.
      await admin.query('ALTER SYSTEM SET default_transaction_read_only = on');
      await admin.query('SELECT pg_reload_conf()');
      // The reload reaches each session between two of its statements (the pool has one session).
      await waitFor('the session read-only', async () => (await pool.query('SHOW default_transaction_read_only')).rows[0]!.default_transaction_read_only === 'on');
      const refused = await withTransaction(pool, (tx) => tx.query('INSERT INTO fenced VALUES (1)')).catch((error: unknown) => error);
      expect((refused as { code?: string }).code).toBe('25006');
      expect(isDatabaseUnavailable(refused)).toBe(true);
      expect(pool.totalCount, 'the session on the read-only server was dropped').toBe(0);
      const none = await pool.query('SELECT 1').catch((error: unknown) => error);
      expect(isDatabaseUnavailable(none), String(none)).toBe(true);
      expect(String(none)).toContain('no listed server takes read-write sessions');
      await admin.query('ALTER SYSTEM RESET default_transaction_read_only');
      await admin.query('SELECT pg_reload_conf()');
      await waitFor('the primary writable again', async () => (await pool.query('SELECT 1').then(() => true, () => false)));
      await withTransaction(pool, (tx) => tx.query('INSERT INTO fenced VALUES (2)'));
      const after = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      expect(after.rows[0]!.pid).not.toBe(before.rows[0]!.pid);
    } finally {
      await pool.end();
      await admin.end();
    }
  });
});
