/*
 * Webhook delivery: load -> decide -> persist, one event per transaction.
 *
 * Request (one per attempt): POST <merchant's current webhook_url>
 *   content-type: application/json
 *   user-agent: stableroute-webhooks/0.1
 *   X-Stableroute-Signature: <lowercase hex HMAC-SHA256(secret, body bytes)>   (spec, Authentication 6; keyed by the
 *     secret string's UTF-8 bytes, whatever its form). The secret is the merchant's own, issued at onboarding
 *     (decision 98); WEBHOOK_SIGNING_SECRET for the test merchant and for merchants onboarded before that. During a
 *     rotation's overlap this is the new secret's signature.
 *   X-Webhook-Signature, X-Signature: the same value, for receivers that look for those names
 *   webhook-id: <event id, e.g. evt_...>; the same on every retry of an event, so receivers can deduplicate
 *   webhook-timestamp: <unix seconds of this attempt>
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")>  (Standard Webhooks)
 *     A "whsec_..." secret: key = its base64 part decoded, so a Standard Webhooks library takes the same string;
 *     a second "v1," entry keyed by the whole string's UTF-8 bytes follows, for receivers set up under the former
 *     rule (configured secret only). Any other secret: key = its UTF-8 bytes (library: "whsec_" + base64(secret)).
 *     During a rotation's overlap there is an entry for the new and for each previous secret. See secret.ts.
 * Body: {"event_type":...,"payment_intent_id":...,"merchant_id":...,"payload":{...}} in exactly that key order;
 *   both signatures cover these exact bytes, which are identical on every retry.
 *
 * Outcome of an attempt:
 *   - success: any 2xx status received within WEBHOOK_TIMEOUT_SECONDS (the response body is ignored).
 *   - redirects are not followed: a 3xx is a failure like any other non-2xx.
 *   - 410 Gone: the event fails at once (status 'failed', held) and the merchant's endpoint is disabled: later events
 *     are stored and held, not sent, until an operator enables it (`stableroute merchants webhook enable`), which
 *     queues every held event again.
 *   - any other failure (non-2xx, connection error, timeout): retried after 1, 60, 360, 1440 and 3600 times
 *     WEBHOOK_RETRY_DELAY_SECONDS (default 5 s: 5 s, 5 min, 30 min, 2 h, 5 h); after the initial attempt plus 5 retries
 *     (6 POSTs) the event is 'failed'.
 *   - the merchant's webhook_url was removed: the event becomes 'stored' (kept, never sent), no POST.
 * Every POST is recorded in webhook_deliveries (attempt number, url, status_code, latency_ms, error).
 *
 * Concurrency: the event row is claimed with FOR UPDATE SKIP LOCKED and the lock is held, in the same transaction,
 * for the whole POST (bounded by the timeout), so concurrent workers never send the same attempt twice. Delivery
 * is at least once: if the process or the database connection dies after the receiver answered but before the
 * commit, that attempt is sent again; receivers deduplicate on webhook-id. Events are not ordered: concurrent
 * lanes and retries can deliver a later event of a payment before an earlier one.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { withTransactionOnce, type Pool, type Queryable } from '../../db/pool.js';
import { disableWebhookEndpoint } from '../../db/queries/merchants.js';
import {
  claimNextDueEvent,
  recordAttempt,
  markHeld,
  markStored,
  type ClaimedEvent,
} from '../../db/queries/webhook-events.js';
import { decideAfterAttempt, type DeliveryDecision, type PostOutcome } from '../../domain/webhook-delivery.js';
import { redactWebhookUrl } from '../../domain/webhook-url.js';
import { destinationPolicy, type Resolver } from '../../webhooks/destination-guard.js';
import { SealedSecretError } from '../../webhooks/secret-box.js';
import { signingSecretsOf } from './secrets.js';
import type { Metrics } from '../../metrics/registry.js';
import { buildWebhookBody, buildWebhookHeaders, postWebhook, truncateError } from '../../webhooks/request.js';

export interface WebhookDeps {
  pool: Pool;
  clock: Clock;
  config: Pick<
    Config,
    | 'webhookSigningSecret'
    | 'apiKeySalt'
    | 'webhookRetryDelaySeconds'
    | 'webhookTimeoutSeconds'
    | 'webhookPollSeconds'
    | 'production'
    | 'webhookSsrfGuard'
    | 'webhookAllowedHosts'
  >;
  /** How host names are resolved; the system's by default (tests stand in a resolver of their own). */
  resolver?: Resolver;
  log?: Logger;
  /** Outcomes and delivery lag are counted once each attempt has committed. */
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'webhookDeliveryLag'>;
}

export interface DeliverOptions {
  /** Most events handled by one call. */
  batchSize?: number;
  /** Events in flight at once; each holds one pool connection for the length of its POST. */
  concurrency?: number;
  /** Checked before each claim; returning false lets the in-flight POSTs finish and claims nothing more. */
  shouldContinue?: () => boolean;
}

export interface DeliveryCounts {
  delivered: number;
  failed: number;
  retried: number;
  /** Events whose merchant no longer has a webhook_url. */
  stored: number;
}

export const DEFAULT_BATCH_SIZE = 20;
export const DEFAULT_CONCURRENCY = 4;
// Margin over the POST timeout for the idle-in-transaction limit: the transaction sits idle while the POST runs.
const IDLE_IN_TRANSACTION_MARGIN_MS = 30_000;

export type AttemptResult =
  | { kind: 'stored'; event: ClaimedEvent }
  | { kind: 'attempted'; event: ClaimedEvent; url: string; outcome: PostOutcome; decision: DeliveryDecision };

export function totalHandled(counts: DeliveryCounts): number {
  return counts.delivered + counts.failed + counts.retried + counts.stored;
}

/** Runs fn in a transaction. Never retried: fn makes a POST, and a blind re-run would send it again. */
export async function inDeliveryTransaction<T>(
  deps: Pick<WebhookDeps, 'pool'> & { config: Pick<WebhookDeps['config'], 'webhookTimeoutSeconds'> },
  fn: (tx: Queryable) => Promise<T>,
): Promise<T> {
  const idleTimeoutMs = Math.ceil(deps.config.webhookTimeoutSeconds * 1000) + IDLE_IN_TRANSACTION_MARGIN_MS;
  return withTransactionOnce(deps.pool, { idleTimeoutMs }, fn);
}

/**
 * One attempt for an event whose row lock `tx` holds: POST, then record the attempt and the decision on `tx`.
 * The caller commits. Shared by the batch below and by the test event.
 */
export async function attemptDelivery(tx: Queryable, deps: WebhookDeps, event: ClaimedEvent): Promise<AttemptResult> {
  if (event.webhookUrl === null) {
    await markStored(tx, event.id);
    deps.log?.info({ event_id: event.id, event_type: event.eventType }, 'webhook url removed; event stored, not sent');
    return { kind: 'stored', event };
  }
  if (event.endpointDisabled) {
    await markHeld(tx, event.id, deps.clock.now());
    deps.log?.info({ event_id: event.id, event_type: event.eventType }, 'webhook endpoint disabled; event held until it is enabled');
    return { kind: 'stored', event };
  }
  const url = event.webhookUrl;
  // A URL stored before credentials were refused must not copy its password into delivery records or answers.
  const shownUrl = redactWebhookUrl(url);
  const attemptedAt = deps.clock.now();
  const body = buildWebhookBody(event);
  const secrets = await signingSecretsOf(tx, deps.config, event.merchantId, attemptedAt).catch((error: unknown) => {
    if (error instanceof SealedSecretError) return error;
    throw error;
  });
  const outcome: PostOutcome =
    secrets instanceof SealedSecretError
      ? // Nothing we could sign with: sending unsigned (or with another key) would teach the receiver to accept forgeries.
        { statusCode: null, latencyMs: 0, error: `refused: ${secrets.message}; rotate the merchant's webhook secret`, refused: true }
      : await postWebhook(
          url,
          body,
          buildWebhookHeaders(secrets, event.id, Math.floor(attemptedAt.getTime() / 1000), body),
          Math.round(deps.config.webhookTimeoutSeconds * 1000),
          destinationPolicy(deps.config),
          deps.resolver,
        );
  const decision = decideAfterAttempt({
    attemptsBefore: event.attempts,
    outcome,
    attemptedAt,
    firstRetryDelaySeconds: deps.config.webhookRetryDelaySeconds,
  });
  const attempt = {
    eventId: event.id,
    attempt: decision.attempts,
    url: shownUrl,
    statusCode: outcome.statusCode,
    latencyMs: outcome.latencyMs,
    error: outcome.error === null ? null : truncateError(outcome.error),
    at: attemptedAt,
  };
  await recordAttempt(tx, attempt, decision, attemptedAt);
  if (decision.status === 'failed' && decision.disableEndpoint) {
    const reason = `HTTP ${outcome.statusCode} Gone at ${attemptedAt.toISOString()}`;
    if (await disableWebhookEndpoint(tx, event.merchantId, attemptedAt, reason)) {
      deps.log?.error({ merchant_id: event.merchantId, event_id: event.id }, 'webhook endpoint answered 410 Gone: disabled until an operator enables it');
    }
  }
  const fields = {
    event_id: event.id,
    event_type: event.eventType,
    attempt: decision.attempts,
    status: decision.status,
    status_code: outcome.statusCode,
    latency_ms: outcome.latencyMs,
    error: outcome.error,
  };
  if (decision.status === 'delivered') deps.log?.info(fields, 'webhook delivered');
  else if (decision.status === 'pending') deps.log?.warn({ ...fields, next_attempt_at: decision.nextAttemptAt }, 'webhook attempt failed; will retry');
  else deps.log?.error(fields, 'webhook failed; no more retries');
  return { kind: 'attempted', event, url: shownUrl, outcome, decision };
}

function count(counts: DeliveryCounts, result: AttemptResult): void {
  if (result.kind === 'stored') counts.stored++;
  else if (result.decision.status === 'delivered') counts.delivered++;
  else if (result.decision.status === 'failed') counts.failed++;
  else counts.retried++;
}

/** Metrics of a committed attempt: its outcome, and for a delivery the time since the event was written. */
export function observeAttempt(deps: WebhookDeps, result: AttemptResult): void {
  if (!deps.metrics) return;
  if (result.kind === 'stored') {
    deps.metrics.webhookDeliveries.inc({ outcome: 'stored' });
    return;
  }
  const status = result.decision.status;
  deps.metrics.webhookDeliveries.inc({ outcome: status === 'pending' ? 'retry' : status });
  if (status === 'delivered') {
    const lagSeconds = Math.max(0, (result.decision.deliveredAt.getTime() - result.event.createdAt.getTime()) / 1000);
    deps.metrics.webhookDeliveryLag.observe({ event_type: result.event.eventType }, lagSeconds);
  }
}

/**
 * Delivers one bounded batch of due events (status 'pending', next_attempt_at <= now). Safe to run from several
 * processes at once. Resolves once nothing of this batch is in flight; rejects with the first database error.
 */
export async function deliverDueEvents(deps: WebhookDeps, options: DeliverOptions = {}): Promise<DeliveryCounts> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const concurrency = Math.max(1, Math.min(options.concurrency ?? DEFAULT_CONCURRENCY, batchSize));
  const shouldContinue = options.shouldContinue ?? (() => true);
  const now = deps.clock.now();
  const handled: string[] = [];
  const counts: DeliveryCounts = { delivered: 0, failed: 0, retried: 0, stored: 0 };
  let claimsLeft = batchSize;

  const lane = async (): Promise<void> => {
    while (claimsLeft > 0 && shouldContinue()) {
      claimsLeft--;
      let result: AttemptResult | null;
      try {
        result = await inDeliveryTransaction(deps, async (tx) => {
          const event = await claimNextDueEvent(tx, now, handled);
          if (event === null) return null;
          handled.push(event.id);
          return attemptDelivery(tx, deps, event);
        });
      } catch (error) {
        claimsLeft = 0; // the other lanes finish what they hold and claim nothing more
        throw error;
      }
      if (result === null) return;
      count(counts, result);
      observeAttempt(deps, result);
    }
  };

  const lanes = await Promise.allSettled(Array.from({ length: concurrency }, lane));
  const rejected = lanes.find((l): l is PromiseRejectedResult => l.status === 'rejected');
  if (rejected !== undefined) throw rejected.reason;
  return counts;
}
