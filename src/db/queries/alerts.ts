// Operator alerts and the operator webhook's outbox (migration 065; screening_hit: 092; screening_list_rejected and
// alerts about no chain: 097; books_behind_chain and database_not_synchronous: 104).
import type { AlertKind, AlertStatus } from '../../domain/alert.js';
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export interface AlertRow {
  id: string;
  kind: AlertKind;
  /** Null for an alert about no one chain (the screening list). */
  chain: Chain | null;
  message: string;
  status: AlertStatus;
  first_seen_at: Date;
  last_seen_at: Date;
  resolved_at: Date | null;
}

const COLUMNS = 'id, kind, chain, message, status, first_seen_at, last_seen_at, resolved_at';

/**
 * Opens the alert, or, when one of this kind and chain is open already, refreshes its message and last_seen_at.
 * `opened` tells which: only a new alert is announced. The partial unique index makes this exact under concurrency.
 */
export async function upsertOpenAlert(
  db: Queryable,
  alert: { id: string; kind: AlertKind; chain: Chain | null; message: string; at: Date },
): Promise<{ alert: AlertRow; opened: boolean }> {
  const { rows } = await db.query<AlertRow & { opened: boolean }>(
    `INSERT INTO operator_alerts AS a (id, kind, chain, message, status, first_seen_at, last_seen_at)
     VALUES ($1, $2, $3, $4, 'open', $5, $5)
     ON CONFLICT (kind, (COALESCE(chain, ''))) WHERE status = 'open'
     DO UPDATE SET message = EXCLUDED.message, last_seen_at = GREATEST(a.last_seen_at, EXCLUDED.last_seen_at)
     RETURNING ${COLUMNS}, (xmax = 0) AS opened`,
    [alert.id, alert.kind, alert.chain, alert.message, alert.at],
  );
  const { opened, ...row } = rows[0]!;
  return { alert: row, opened };
}

/** Resolves the open alert of this kind and chain, if any; returns it. */
export async function markAlertResolved(db: Queryable, kind: AlertKind, chain: Chain | null, at: Date): Promise<AlertRow | null> {
  const { rows } = await db.query<AlertRow>(
    `UPDATE operator_alerts SET status = 'resolved', resolved_at = $3
      WHERE kind = $1 AND COALESCE(chain, '') = COALESCE($2, '') AND status = 'open' RETURNING ${COLUMNS}`,
    [kind, chain, at],
  );
  return rows[0] ?? null;
}

/** Newest first; `before` is the previous page's last id (keyset on (first_seen_at, id)). */
export async function listAlerts(db: Queryable, filter: { status?: AlertStatus; limit: number; before?: string }): Promise<AlertRow[]> {
  const { rows } = await db.query<AlertRow>(
    `SELECT ${COLUMNS} FROM operator_alerts a
      WHERE ($1::text IS NULL OR status = $1)
        AND ($2::text IS NULL OR (first_seen_at, id) < (SELECT first_seen_at, id FROM operator_alerts WHERE id = $2))
      ORDER BY first_seen_at DESC, id DESC LIMIT $3`,
    [filter.status ?? null, filter.before ?? null, filter.limit],
  );
  return rows;
}

export interface AlertNotification {
  id: string;
  alert_id: string;
  event_type: 'alert.raised' | 'alert.resolved';
  body: string;
  attempts: number;
  created_at: Date;
}

export async function insertAlertNotification(db: Queryable, n: AlertNotification & { at: Date }): Promise<void> {
  await db.query(
    `INSERT INTO operator_alert_notifications (id, alert_id, event_type, body, next_attempt_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $5)`,
    [n.id, n.alert_id, n.event_type, n.body, n.at],
  );
}

/** The next due notification, locked for this transaction (concurrent deliverers skip it). */
export async function claimDueNotification(db: Queryable, now: Date): Promise<AlertNotification | null> {
  const { rows } = await db.query<AlertNotification>(
    `SELECT id, alert_id, event_type, body, attempts, created_at FROM operator_alert_notifications
      WHERE status = 'pending' AND next_attempt_at <= $1
      ORDER BY next_attempt_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`,
    [now],
  );
  return rows[0] ?? null;
}

export async function markNotificationDelivery(
  db: Queryable,
  id: string,
  result:
    | { status: 'delivered'; attempts: number; at: Date }
    | { status: 'pending'; attempts: number; nextAttemptAt: Date; lastError: string }
    | { status: 'failed'; attempts: number; lastError: string },
): Promise<void> {
  await db.query(
    `UPDATE operator_alert_notifications
        SET status = $2, attempts = $3, delivered_at = $4, next_attempt_at = COALESCE($5, next_attempt_at), last_error = $6
      WHERE id = $1`,
    [
      id,
      result.status,
      result.attempts,
      result.status === 'delivered' ? result.at : null,
      result.status === 'pending' ? result.nextAttemptAt : null,
      result.status === 'delivered' ? null : result.lastError,
    ],
  );
}
