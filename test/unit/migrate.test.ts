import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db.drop());

describe('migrations', () => {
  it('are applied once and are idempotent on re-run', async () => {
    const { rows } = await db.pool.query('SELECT name FROM schema_migrations');
    expect(rows.length).toBeGreaterThan(0);
    expect(await migrate(db.pool)).toEqual([]);
  });
});
