// Each test file gets its own freshly migrated database, dropped when the file is done.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createPool, type Pool } from '../../src/db/pool.js';

export interface TestDatabase {
  url: string;
  pool: Pool;
  drop(): Promise<void>;
}

export function adminDatabaseUrl(): string {
  return inject('adminDatabaseUrl');
}

export function databaseUrlFor(name: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `sr_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = databaseUrlFor(name);
  const pool = createPool(url, 20);
  await migrate(pool);
  return {
    url,
    pool,
    drop: async () => {
      await pool.end();
      const client = new pg.Client({ connectionString: adminDatabaseUrl() });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}
