import pg from 'pg';

/** Creates the database named in `url` when the server does not have it yet (a fresh DATABASE_URL just works). */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  try {
    await probe.connect();
    return;
  } catch (error) {
    if ((error as { code?: string }).code !== '3D000') throw error;
  } finally {
    await probe.end().catch(() => undefined);
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString(), connectionTimeoutMillis: 10_000 });
  await client.connect();
  try {
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
