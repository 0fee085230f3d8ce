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

/**
 * A merchant and a quote for the chain tests that write payment intents straight into the database (the adapters'
 * own tests, which sign attempts as the execution does but skip the API).
 */
export async function seedMerchantAndQuote(db: TestDatabase, ids: { merchantId: string; quoteId: string; chain: string }): Promise<void> {
  await db.pool.query("INSERT INTO merchants (id, name, created_at) VALUES ($1, $1, now())", [ids.merchantId]);
  await db.pool.query(
    `INSERT INTO quotes (id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route, scoring_details,
       chain_health, treasury_balances, created_at, expires_at)
     VALUES ($1, $2, 1, 'fast', '{}', '[]', $3, '[]', '[]', '[]', now(), now())`,
    [ids.quoteId, ids.merchantId, ids.chain],
  );
}
