import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations/', import.meta.url));
// Several processes may start at once against one database: one prepares it (migrations, then the job queues), the
// others wait on this session lock and then find nothing left to do.
const STARTUP_LOCK = 7_340_211_001;

/**
 * Runs `fn` while this process holds the start-up lock, on the client that holds it. Everything that creates shared
 * schema at start-up runs under it, so concurrent starts on a fresh database never race each other (decision 50).
 */
export async function withStartupLock<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [STARTUP_LOCK]);
    return await fn(client);
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [STARTUP_LOCK]).catch(() => undefined);
    client.release();
  }
}

/**
 * What a migration needs beyond its SQL, by file name: run in the migration's own transaction after its SQL, with what
 * only the process has (a key that never enters the database).
 */
export type MigrationSteps = Readonly<Record<string, (client: pg.PoolClient) => Promise<void>>>;

/** Applies pending SQL migrations in file-name order, each in its own transaction. Returns the names applied. */
export async function migrate(pool: pg.Pool, steps: MigrationSteps = {}): Promise<string[]> {
  return withStartupLock(pool, (client) => applyMigrations(client, steps));
}

/** The migrations themselves, on a client that holds the start-up lock. */
export async function applyMigrations(client: pg.PoolClient, steps: MigrationSteps = {}): Promise<string[]> {
  const applied: string[] = [];
  await client.query(
    'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
  );
  const done = new Set((await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name));
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => f.endsWith('.sql')).sort();
  for (const file of files) {
    if (done.has(file)) continue;
    const sql = await readFile(new URL(file, `file://${MIGRATIONS_DIR}`), 'utf8');
    await client.query('BEGIN');
    try {
      await client.query(sql);
      await steps[file]?.(client);
      await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
      await client.query('COMMIT');
      applied.push(file);
    } catch (error) {
      await client.query('ROLLBACK');
      throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error });
    }
  }
  return applied;
}
