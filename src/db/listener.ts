// One LISTEN connection to a NOTIFY channel, kept open: reconnects with capped backoff when the connection drops,
// and reports each (re)connection, after which its caller should re-read what it shows (notifications sent while
// it was away are lost; NOTIFY is a hint, never the record).
import pg from 'pg';
import type { Logger } from 'pino';
import type { Pool } from './pool.js';
import { LISTEN_END_TIMEOUT_MS, LISTEN_RECONNECT_MAX_MS, LISTEN_RECONNECT_MIN_MS } from '../bounds.js';

export interface ListenerOptions {
  channel: string;
  onNotice(payload: string): void;
  /** Called after every successful LISTEN, the first one included. */
  onListening?(): void;
  log?: Logger;
  /** How the connection shows in pg_stat_activity; default stableroute-listen-<channel>. */
  applicationName?: string;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

export interface Listener {
  readonly listening: boolean;
  close(): Promise<void>;
}

export function listen(pool: Pool, options: ListenerOptions): Listener {
  const minMs = options.reconnectMinMs ?? LISTEN_RECONNECT_MIN_MS;
  const maxMs = options.reconnectMaxMs ?? LISTEN_RECONNECT_MAX_MS;
  let running = true;
  let client: pg.Client | null = null;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  let connecting: Promise<void> | null = null;

  const retry = () => {
    if (!running || timer !== null) return;
    const delay = Math.min(maxMs, minMs * 2 ** failures++);
    timer = setTimeout(() => {
      timer = null;
      connecting = connect().finally(() => (connecting = null));
    }, delay);
    timer.unref();
  };

  async function connect(): Promise<void> {
    if (!running) return;
    const next = pool.target.client({ ...pool.options, application_name: options.applicationName ?? `stableroute-listen-${options.channel}`, keepAlive: true });
    let dropped = false;
    const drop = (error?: unknown) => {
      if (dropped) return;
      dropped = true;
      if (client === next) client = null;
      next.end().catch(() => undefined);
      if (running) {
        options.log?.warn({ err: error, channel: options.channel }, 'LISTEN connection lost; reconnecting');
        retry();
      }
    };
    next.on('error', drop);
    next.on('end', () => drop());
    next.on('notification', (message) => {
      if (message.channel === options.channel && message.payload !== undefined) options.onNotice(message.payload);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${options.channel}`);
    } catch (error) {
      drop(error);
      return;
    }
    if (dropped) return;
    if (!running) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
    failures = 0;
    options.onListening?.();
  }

  connecting = connect().finally(() => (connecting = null));

  return {
    get listening() {
      return client !== null;
    },
    async close() {
      running = false;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      if (connecting) await connecting.catch(() => undefined);
      const open = client;
      client = null;
      if (open) {
        await Promise.race([open.end().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, LISTEN_END_TIMEOUT_MS).unref())]);
      }
    },
  };
}
