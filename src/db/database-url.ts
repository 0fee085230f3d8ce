// PostgreSQL connection URLs as libpq reads them, several hosts included:
// postgres://user:pass@h1:5432,h2:5433,[::1]/db?target_session_attrs=read-write. node-postgres takes one host, so the
// list is read here and each host gets a one-host URL of its own (host-selecting-client.ts picks among them).

/** libpq's target_session_attrs: which of the listed servers a session may land on. */
export type SessionAttrs = 'any' | 'read-write' | 'read-only' | 'primary' | 'standby' | 'prefer-standby';
export const SESSION_ATTRS: readonly SessionAttrs[] = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'];

export interface DatabaseHost {
  /** As node-postgres takes it: percent-decoding done, no brackets around an IPv6 address. */
  readonly host: string;
  readonly port: number;
  /** host:port as an operator reads it in a message ([::1]:5432). */
  readonly label: string;
}

export interface DatabaseUrl {
  readonly hosts: readonly DatabaseHost[];
  /** null: the URL does not say (libpq then takes any server). */
  readonly targetSessionAttrs: SessionAttrs | null;
  readonly database: string;
  /** One host's URL: the same user, password, database and parameters, without target_session_attrs. */
  hostUrl(host: DatabaseHost): string;
  /** The whole URL (every host) on another database of the same servers. */
  withDatabase(name: string): string;
}

export type ParsedDatabaseUrl = { ok: true; url: DatabaseUrl } | { ok: false; problem: string };

const DEFAULT_PORT = 5432;
const SHAPE = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)(\/[^?#]*)?(\?[^#]*)?$/;
const BRACKETED = /^\[([0-9A-Fa-f:.]+(?:%[^\]]*)?)\](?::([0-9]*))?$/;
const PLAIN = /^([^:[\]]*)(?::([0-9]*))?$/;
/** Query parameters that name hosts themselves: they would override the host picked from the list. */
const HOST_PARAMETERS = ['host', 'hostaddr', 'port'];

/** Reads `raw`; the problem, when there is one, never repeats the URL (it may hold a password). */
export function parseDatabaseUrl(raw: string): ParsedDatabaseUrl {
  const match = SHAPE.exec(raw.trim());
  if (!match) return { ok: false, problem: 'expected a PostgreSQL URL: postgres://user@host[:port][,host2[:port]...]/database' };
  const [, scheme, userinfo, hostspec, path, query] = match as unknown as [string, string, string | undefined, string, string | undefined, string | undefined];
  const hosts: DatabaseHost[] = [];
  for (const entry of hostspec.split(',')) {
    const host = hostOf(entry);
    if (typeof host === 'string') return { ok: false, problem: host };
    hosts.push(host);
  }
  const params = new URLSearchParams(query?.slice(1) ?? '');
  const attrs = params.get('target_session_attrs');
  if (attrs !== null && !(SESSION_ATTRS as readonly string[]).includes(attrs)) {
    return { ok: false, problem: `target_session_attrs must be one of ${SESSION_ATTRS.join(', ')}` };
  }
  if ((hosts.length > 1 || attrs !== null) && HOST_PARAMETERS.some((p) => params.has(p))) {
    return { ok: false, problem: `with several hosts or target_session_attrs, name the hosts in the host list, not in ${HOST_PARAMETERS.join('/')} parameters` };
  }
  params.delete('target_session_attrs');
  const rest = params.toString();
  const database = safeDecode(path?.slice(1) ?? '');
  if (database === null) return { ok: false, problem: 'the database name is not valid percent-encoding' };
  const prefix = `${scheme}://${userinfo !== undefined ? `${userinfo}@` : ''}`;
  const suffix = rest === '' ? '' : `?${rest}`;
  const hostText = (h: DatabaseHost) => `${h.host.includes(':') ? `[${h.host}]` : encodeURIComponent(h.host)}:${h.port}`;
  const url: DatabaseUrl = {
    hosts,
    targetSessionAttrs: attrs as SessionAttrs | null,
    database,
    hostUrl: (h) => `${prefix}${hostText(h)}${path ?? ''}${suffix}`,
    withDatabase: (name) => `${prefix}${hostspec}/${encodeURIComponent(name)}${query ?? ''}`,
  };
  return { ok: true, url };
}

function hostOf(entry: string): DatabaseHost | string {
  const bracketed = BRACKETED.exec(entry);
  const plain = bracketed ? null : PLAIN.exec(entry);
  const parts = bracketed ?? plain;
  if (!parts) return 'a host in the list is not host[:port] or [IPv6 address][:port]';
  const host = safeDecode(parts[1]!);
  if (host === null) return 'a host in the list is not valid percent-encoding';
  // An empty host is libpq's default, as node-postgres's.
  const name = host === '' ? 'localhost' : host;
  const port = parts[2] === undefined || parts[2] === '' ? DEFAULT_PORT : Number(parts[2]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return 'a port in the list is not between 1 and 65535';
  return { host: name, port, label: `${name.includes(':') ? `[${name}]` : name}:${port}` };
}

function safeDecode(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}
