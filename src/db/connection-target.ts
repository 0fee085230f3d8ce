// How a process reaches the database of a URL: the options every pg.Pool takes (ours and pg-boss's), and single
// clients (LISTEN connections, the start-up checks), all through the same host selection when the URL lists several
// hosts or asks for a kind of server (target_session_attrs).
import pg from 'pg';
import { parseDatabaseUrl } from './database-url.js';
import { hostSelectingClient } from './host-selecting-client.js';

export interface ConnectionTarget {
  /** For a pg.Pool: the connection string, and the Client class that picks the host when there is a choice. */
  readonly poolOptions: { connectionString: string; Client?: typeof pg.Client };
  /** A client of its own (not pooled), on the host a pooled one would land on. */
  client(config?: pg.ClientConfig): pg.Client;
}

export function connectionTarget(url: string): ConnectionTarget {
  const parsed = parseDatabaseUrl(url);
  // One host and nothing to check: node-postgres as it is (configuration refused anything it cannot read).
  if (!parsed.ok || (parsed.url.hosts.length === 1 && parsed.url.targetSessionAttrs === null)) {
    return { poolOptions: { connectionString: url }, client: (config = {}) => new pg.Client({ ...config, connectionString: url }) };
  }
  const Client = hostSelectingClient(parsed.url);
  return { poolOptions: { connectionString: parsed.url.hostUrl(parsed.url.hosts[0]!), Client }, client: (config = {}) => new Client(config) };
}
