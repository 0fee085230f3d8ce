// Keys issued before the api_keys table keep working: migration 022 moves merchants.api_key_hash into api_keys
// (no prefix: it was never stored) and drops the column. The database is migrated up to 021, given a merchant the
// old way, then migrated the rest of the way.
import { readdir, readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeysOf, hashApiKey, revokeApiKey } from '../../src/core/merchants/api-keys.js';
import { authenticate, createKeyLookups } from '../../src/core/merchants/merchants.js';
import { migrate } from '../../src/db/migrate.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { adminDatabaseUrl, databaseUrlFor } from '../helpers/db.js';
import { TEST_AUDIT_CONFIG, testAudit } from '../helpers/audit.js';

const MIGRATIONS = new URL('../../src/db/migrations/', import.meta.url);
const CONFIG = { apiKeySalt: 'legacy-salt', production: true, ...TEST_AUDIT_CONFIG };
const LEGACY_KEY = 'sr_live_issued-before-key-rotation-existed';
const name = `sr_test_${randomBytes(6).toString('hex')}`;
let pool: Pool;

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminDatabaseUrl() });
  await client.connect();
  await client.query(sql);
  await client.end();
}

beforeAll(async () => {
  await admin(`CREATE DATABASE ${name}`);
  pool = createPool(databaseUrlFor(name), 4);
  await pool.query('CREATE TABLE schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())');
  for (const file of (await readdir(MIGRATIONS)).filter((f) => f.endsWith('.sql') && f < '022').sort()) {
    await pool.query(await readFile(new URL(file, MIGRATIONS), 'utf8'));
    await pool.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
  }
  await pool.query("INSERT INTO merchants (id, name, api_key_hash, created_at) VALUES ('mer_legacy', 'Legacy', $1, '2026-01-01T00:00:00Z')", [
    hashApiKey(CONFIG.apiKeySalt, LEGACY_KEY),
  ]);
  expect(await migrate(pool)).toContain('022_api_keys.sql');
});
afterAll(async () => {
  await pool.end();
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
});

describe('migration 022: API keys move to their own table', () => {
  it('the old key still authenticates as its merchant, listed without a prefix, and can be revoked by the whole key', async () => {
    expect(await authenticate(createKeyLookups(pool), CONFIG, LEGACY_KEY)).toMatchObject({ id: 'mer_legacy', keyId: expect.stringMatching(/^key_[0-9a-f]{16}$/) });
    const [key] = await apiKeysOf(pool, 'mer_legacy');
    expect(key).toMatchObject({ merchant_id: 'mer_legacy', prefix: null, revoked_at: null, created_at: new Date('2026-01-01T00:00:00Z') });
    await revokeApiKey(pool, CONFIG, 'mer_legacy', LEGACY_KEY, new Date(), testAudit());
    expect(await authenticate(createKeyLookups(pool), CONFIG, LEGACY_KEY)).toBeNull();
  });

  it('leaves no second copy of the hash in merchants', async () => {
    const { rows } = await pool.query("SELECT column_name FROM information_schema.columns WHERE table_name = 'merchants' AND column_name = 'api_key_hash'");
    expect(rows).toEqual([]);
  });
});
