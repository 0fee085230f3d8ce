// Operator alerts (decision 120): a condition an operator must act on (gas below the low-water mark, the ledger
// disagreeing with the chain). Raised and resolved inside the caller's transaction; deduplicated while open (one open
// alert per kind and chain); logged; listed at GET /admin/alerts; and, when OPERATOR_WEBHOOK_URL is set, announced
// there through an outbox (operator_alert_notifications) delivered with the merchant webhooks' signing and retry
// schedule. The operator's URL is the operator's own configuration, so the SSRF guard does not apply to it.
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Pool, Queryable } from '../../db/pool.js';
import {
  claimDueNotification,
  insertAlertNotification,
  listAlerts,
  markNotificationDelivery,
  markAlertResolved,
  upsertOpenAlert,
  type AlertRow,
} from '../../db/queries/alerts.js';
import type { AlertKind, AlertStatus } from '../../domain/alert.js';
import type { Chain } from '../../domain/chain.js';
import { decideAfterDelivery } from '../../domain/webhook-delivery.js';
import { newId } from '../../ids.js';
import { parseAllowList, type DestinationPolicy, type Resolver } from '../../webhook-client/destination-guard.js';
import { buildWebhookHeaders, postWebhook } from '../../webhook-client/request.js';
import { inDeliveryTransaction } from '../webhooks/delivery.js';
import { ALERT_DELIVERIES_PER_PASS_MAX } from '../../bounds.js';

export type { AlertRow };

export interface AlertDeps {
  config: Pick<Config, 'operatorWebhookUrl'>;
  log: Logger;
}

export interface AlertDeliveryDeps {
  pool: Pool;
  clock: Clock;
  config: Pick<Config, 'operatorWebhookUrl' | 'operatorWebhookSecret' | 'webhookTimeoutSeconds' | 'webhookRetryDelaySeconds'>;
  log: Logger;
  resolver?: Resolver;
}

/** The operator's own receiver is trusted configuration: any address, plain http allowed (decision 120). */
const OPERATOR_DESTINATION: DestinationPolicy = { guard: false, requireHttps: false, allow: parseAllowList([]) };

export function alertView(alert: AlertRow) {
  return {
    id: alert.id,
    kind: alert.kind,
    chain: alert.chain,
    message: alert.message,
    status: alert.status,
    first_seen_at: alert.first_seen_at.toISOString(),
    last_seen_at: alert.last_seen_at.toISOString(),
    resolved_at: alert.resolved_at?.toISOString() ?? null,
  };
}

/**
 * One page of alerts, newest first (GET /admin/alerts), and the next page's cursor: the last alert of a full page
 * (a full last page costs one empty page more), null after a short one.
 */
export async function alertPage(
  db: Queryable,
  filter: { status?: AlertStatus; limit: number; before?: string },
): Promise<{ alerts: AlertRow[]; nextCursor: string | null }> {
  const alerts = await listAlerts(db, filter);
  return { alerts, nextCursor: alerts.length === filter.limit ? alerts[alerts.length - 1]!.id : null };
}

async function announce(tx: Queryable, deps: AlertDeps, alert: AlertRow, eventType: 'alert.raised' | 'alert.resolved', at: Date) {
  if (deps.config.operatorWebhookUrl === null) return;
  const body = JSON.stringify({ event_type: eventType, alert: alertView(alert) });
  await insertAlertNotification(tx, { id: newId('ntf'), alert_id: alert.id, event_type: eventType, body, attempts: 0, created_at: at, at });
}

/** Raises the alert (or refreshes the open one). Returns whether this call opened it. */
export async function raiseAlert(
  tx: Queryable,
  deps: AlertDeps,
  alert: { kind: AlertKind; chain: Chain | null; message: string },
  at: Date,
): Promise<boolean> {
  const { alert: row, opened } = await upsertOpenAlert(tx, { id: newId('alt'), ...alert, at });
  if (opened) {
    deps.log.warn({ alert_id: row.id, alert_kind: row.kind, chain: row.chain }, `operator alert: ${row.message}`);
    await announce(tx, deps, row, 'alert.raised', at);
  }
  return opened;
}

/** Resolves the open alert of this kind and chain (null: about no chain), if there is one. Returns whether one was resolved. */
export async function resolveAlert(tx: Queryable, deps: AlertDeps, kind: AlertKind, chain: Chain | null, at: Date): Promise<boolean> {
  const row = await markAlertResolved(tx, kind, chain, at);
  if (!row) return false;
  deps.log.info({ alert_id: row.id, alert_kind: row.kind, chain: row.chain }, 'operator alert resolved');
  await announce(tx, deps, row, 'alert.resolved', at);
  return true;
}

/**
 * Sends due notifications to OPERATOR_WEBHOOK_URL, one per transaction, the row locked while its POST runs (bounded by
 * WEBHOOK_TIMEOUT_SECONDS), so two processes never send the same attempt. Signed like merchant webhooks with
 * OPERATOR_WEBHOOK_SECRET (webhook-id is the notification id). Returns how many were attempted.
 */
export async function deliverAlertNotifications(deps: AlertDeliveryDeps): Promise<number> {
  const url = deps.config.operatorWebhookUrl;
  if (url === null) return 0;
  let attempted = 0;
  for (; attempted < ALERT_DELIVERIES_PER_PASS_MAX; attempted++) {
    // Never re-run on a deadlock: the callback POSTs, and a blind re-run would send the alert again.
    const done = await inDeliveryTransaction(deps, async (tx) => {
      const now = deps.clock.now();
      const due = await claimDueNotification(tx, now);
      if (!due) return false;
      const headers = buildWebhookHeaders(deps.config.operatorWebhookSecret, due.id, Math.floor(now.getTime() / 1000), due.body);
      const outcome = await postWebhook(url, due.body, headers, deps.config.webhookTimeoutSeconds * 1000, OPERATOR_DESTINATION, deps.resolver);
      const decision = decideAfterDelivery({
        attemptsBefore: due.attempts,
        outcome,
        attemptedAt: now,
        firstRetryDelaySeconds: deps.config.webhookRetryDelaySeconds,
      });
      await markNotificationDelivery(tx, due.id, decision.status === 'delivered' ? { status: 'delivered', attempts: decision.attempts, at: now } : decision);
      if (decision.status !== 'delivered') deps.log.warn({ notification_id: due.id, error: outcome.error }, 'operator alert webhook not delivered');
      return true;
    });
    if (!done) break;
  }
  return attempted;
}
