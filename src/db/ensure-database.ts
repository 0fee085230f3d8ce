import { connectionTarget } from './connection-target.js';
import { parseDatabaseUrl } from './database-url.js';

/**
 * What a connection to a missing database fails with: PostgreSQL's invalid_catalog_name, and the protocol_violation
 * PgBouncer (before 1.19) answers with for the server's refusal. The catalog then tells whether it is missing.
 */
const MAYBE_MISSING = new Set(['3D000', '08P01']);

/** Creates the database named in `url` when the server does not have it yet (a fresh DATABASE_URL just works). */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = connectionTarget(url).client({ connectionTimeoutMillis: 10_000 });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if (!MAYBE_MISSING.has((error as { code?: string }).code ?? '')) throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const { name, adminUrl } = databaseOf(url);
  // The same hosts and target_session_attrs: the database is created on the server the service will write to.
  const client = connectionTarget(adminUrl).client({ connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    // There now: another process (several start together) created it after our probe, or the refusal was not about a
    // missing database (PgBouncer's 08P01). A second probe tells: it connects, or its own error is the answer.
    if (rows.length > 0) return await probeAgain(url);
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } catch (error) {
    // Created meanwhile by another process: 42P04 when its CREATE committed first, 23505 (pg_database_datname_index)
    // when both inserted the catalog row at once and ours lost.
    const code = (error as { code?: string }).code;
    if (code !== '42P04' && code !== '23505') throw error;
  } finally {
    await client.end();
  }
}

async function probeAgain(url: string): Promise<void> {
  const probe = connectionTarget(url).client({ connectionTimeoutMillis: 10_000 });
  try {
    await probe.connect();
  } finally {
    await probe.end().catch(() => undefined);
  }
}

function databaseOf(url: string): { name: string; adminUrl: string } {
  const parsed = parseDatabaseUrl(url);
  if (parsed.ok) return { name: parsed.url.database, adminUrl: parsed.url.withDatabase('postgres') };
  const target = new URL(url);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  return { name: decodeURIComponent(target.pathname.slice(1)), adminUrl: admin.toString() };
}
