// libpq's host selection for node-postgres, which connects to one host (decision 193): a pg.Client whose connect()
// goes down the URL's host list and lands on the first server that takes the sessions target_session_attrs asks for
// (read-write: the primary). Pools, LISTEN connections, pg-boss and the start-up checks all build their clients from
// it, so after a failover each new connection finds the promoted server by itself.
import pg from 'pg';
import type { DatabaseHost, DatabaseUrl, SessionAttrs } from './database-url.js';
import { isDatabaseUnavailable } from './outage.js';
import { DB_HOST_CONNECT_TIMEOUT_MS } from '../bounds.js';

interface ServerRole {
  /** In recovery: a standby. */
  standby: boolean;
  /** Sessions start read-only (a standby, or default_transaction_read_only). */
  readOnly: boolean;
}

const ROLE_SQL = "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') = 'on' AS read_only";

/** connection_failure: an outage to every caller (outage.ts), never a bug. */
class NoServerError extends Error {
  readonly code = '08006';
}

function accepts(attrs: SessionAttrs, role: ServerRole): boolean {
  switch (attrs) {
    case 'any':
      return true;
    case 'read-write':
      return !role.readOnly;
    case 'read-only':
      return role.readOnly;
    case 'primary':
      return !role.standby;
    case 'standby':
    case 'prefer-standby':
      return role.standby;
  }
}

async function roleOf(client: Pick<pg.Client, 'query'>): Promise<ServerRole> {
  const { rows } = await client.query<{ standby: boolean; read_only: boolean }>(ROLE_SQL);
  return { standby: rows[0]!.standby, readOnly: rows[0]!.read_only };
}

/**
 * The pg.Client class for `url`: one per pool (or other owner), which remembers the server its last connection landed
 * on and tries it first, so a host that stopped answering (a lost machine whose connects time out) costs each new
 * connection nothing once one connection has moved past it.
 */
export function hostSelectingClient(url: DatabaseUrl): typeof pg.Client {
  const attrs = url.targetSessionAttrs ?? 'any';
  let lastGood: DatabaseHost | null = null;
  const order = () => (lastGood === null ? url.hosts : [lastGood, ...url.hosts.filter((h) => h !== lastGood)]);

  /** A throwaway session on each host in turn, until one takes the sessions asked for. */
  async function pick(config: pg.ClientConfig): Promise<{ host: DatabaseHost; check: boolean }> {
    const refusals: string[] = [];
    let reachable: DatabaseHost | null = null;
    /** A server's refusal that is no outage (a bad password, a database it lacks): said as it is, with its code. */
    let refused: unknown = null;
    for (const host of order()) {
      const probe = new pg.Client({
        ...config,
        connectionString: url.hostUrl(host),
        connectionTimeoutMillis: Math.min(config.connectionTimeoutMillis || DB_HOST_CONNECT_TIMEOUT_MS, DB_HOST_CONNECT_TIMEOUT_MS),
      });
      probe.on('error', () => undefined);
      try {
        await probe.connect();
        const role = await roleOf(probe);
        if (accepts(attrs, role)) return { host, check: true };
        reachable ??= host;
        refusals.push(`${host.label} (${role.standby ? 'standby' : role.readOnly ? 'read-only' : 'primary'})`);
      } catch (error) {
        if (!isDatabaseUnavailable(error)) refused ??= error;
        refusals.push(`${host.label} (${(error as { code?: string }).code ?? (error as Error).message})`);
      } finally {
        await probe.end().catch(() => undefined);
      }
    }
    // prefer-standby: no standby answered, so any server that did.
    if (attrs === 'prefer-standby' && reachable !== null) return { host: reachable, check: false };
    if (refused !== null) throw refused;
    throw new NoServerError(`no listed server takes ${attrs} sessions: ${refusals.join(', ')}`);
  }

  return class HostSelectingClient extends pg.Client {
    readonly #config: pg.ClientConfig;

    constructor(config: pg.ClientConfig = {}) {
      super({ ...config, connectionString: url.hostUrl(lastGood ?? url.hosts[0]!) });
      this.#config = config;
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null, client?: pg.Client) => void): void;
    override connect(callback?: (err: Error | null, client?: pg.Client) => void): Promise<pg.Client> | void {
      const connected = this.#connectToTarget().then(() => this);
      if (!callback) return connected;
      connected.then(
        () => callback(null, this),
        (error: Error) => callback(error),
      );
    }

    async #connectToTarget(): Promise<void> {
      const { host, check } = await pick(this.#config);
      const parameters = (this as unknown as { connectionParameters: { host: string; port: number } }).connectionParameters;
      this.host = parameters.host = host.host;
      this.port = parameters.port = host.port;
      await super.connect();
      // The server may have changed between the probe and this session (a demoted primary back as a standby).
      if (check && !accepts(attrs, await roleOf(this))) {
        lastGood = null;
        await this.end().catch(() => undefined);
        throw new NoServerError(`${host.label} no longer takes ${attrs} sessions`);
      }
      lastGood = host;
    }
  };
}
