// What an outage of the database looks like from here, in one place: group commit fails a whole batch on it rather
// than retrying item by item, and the HTTP error handler answers it with 503 instead of the 500 of a bug.

/**
 * The database could not be reached, dropped the session (a restart, a failover, pg_terminate_backend), or refused
 * for want of resources or time: an outage, not a bug, and transient. A statement that failed this way committed
 * nothing, except a COMMIT whose answer was lost on the way back (an idempotent retry tells).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    // SQLSTATE: connection exception (08), insufficient resources (53), shutdowns, cannot connect now and statement
    // timeouts (57P01-57P03, 57014); then the socket errors of a server that is not there.
    if (/^(08|53|57P0[1-3]$|57014$)/.test(code)) return true;
    // read_only_sql_transaction: the server is (now) a standby, a demoted primary back after a failover. The session
    // is dropped (pool.ts) and the next one goes to the server that took over (host-selecting-client.ts).
    if (code === '25006') return true;
    if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN)$/.test(code)) return true;
  }
  // node-postgres raises these without a code.
  const message = error instanceof Error ? error.message : '';
  return /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed)/.test(message);
}
