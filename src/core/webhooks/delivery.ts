/*
 * Webhook delivery: load -> decide -> persist, a claim of a few events per transaction (decision 75).
 *
 * Request (one per delivery): POST <merchant's current webhook_url>
 *   content-type: application/json
 *   user-agent: stableroute-webhooks/0.1
 *   X-Stableroute-Signature: <lowercase hex HMAC-SHA256(secret, body bytes)>   (spec, Authentication 6; keyed by the
 *     secret string's UTF-8 bytes, whatever its form). The secret is the merchant's own, issued at onboarding
 *     (decision 67); WEBHOOK_SIGNING_SECRET for the test merchant and for merchants onboarded before that. During a
 *     rotation's overlap this is the new secret's signature.
 *   X-Webhook-Signature, X-Signature: the same value, for receivers that look for those names
 *   webhook-id: <event id, e.g. evt_...>; the same on every retry of an event, so receivers can deduplicate
 *   webhook-timestamp: <unix seconds of this delivery>
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, "{webhook-id}.{webhook-timestamp}.{body}")>  (Standard Webhooks)
 *     A "whsec_..." secret: key = its base64 part decoded, so a Standard Webhooks library takes the same string;
 *     a second "v1," entry keyed by the whole string's UTF-8 bytes follows, for receivers set up under the former
 *     rule (configured secret only). Any other secret: key = its UTF-8 bytes (library: "whsec_" + base64(secret)).
 *     During a rotation's overlap there is an entry for the new and for each previous secret. See secret.ts.
 * Body: {"event_type":...,"payment_intent_id":...,"merchant_id":...,"payload":{...}} in exactly that key order;
 *   both signatures cover these exact bytes, which are identical on every retry.
 *
 * Outcome of a delivery:
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
 * Concurrency: event rows are claimed a few at a time with FOR UPDATE SKIP LOCKED and the locks are held, in the
 * same transaction, for the claim's POSTs (one after the other, each bounded by the timeout), so concurrent workers
 * never send the same attempt twice. Delivery is at least once: if the process or the database connection dies after a
 * receiver answered but before the commit, the claim's attempts are sent again (so is every attempt of a claim whose
 * recording fails); receivers deduplicate on webhook-id. Events are not ordered: concurrent
 * lanes and retries can deliver a later event of a payment before an earlier one.
 */
import type { Logger } from 'pino';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { withTransactionOnce, type Pool, type Queryable } from '../../db/pool.js';
import { markWebhookEndpointDisabled } from '../../db/queries/merchants.js';
import {
  claimDueEvents,
  insertDeliveries,
  markHeld,
  markStored,
  type ClaimedEvent,
} from '../../db/queries/webhook-events.js';
import { decideAfterDelivery, type DeliveryDecision, type PostOutcome } from '../../domain/webhook-delivery.js';
import { redactWebhookUrl } from '../../domain/webhook-url.js';
import { destinationPolicy, type Resolver } from '../../webhook-client/destination-guard.js';
import { SealedSecretError } from '../../webhook-client/secret-box.js';
import { signingSecretsOf } from './secrets.js';
import type { Metrics } from '../../metrics/registry.js';
import { buildWebhookBody, buildWebhookHeaders, postWebhook, truncateError } from '../../webhook-client/request.js';
import { readTraceparents } from '../../db/queries/traces.js';
import { tracer, type SpanAttributes } from '../../tracing/tracer.js';
import { inLanes } from '../lanes.js';
import { WEBHOOK_BATCH_EVENTS_MAX, WEBHOOK_IDLE_IN_TRANSACTION_MARGIN_MS, WEBHOOK_LANES } from '../../bounds.js';

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
  /** Events in flight at once: lanes, each holding one pool connection and a claim of its share of the batch. */
  concurrency?: number;
  /** Checked before each POST; returning false lets the in-flight POSTs finish and sends nothing more. */
  shouldContinue?: () => boolean;
}

export interface DeliveryCounts {
  delivered: number;
  failed: number;
  retried: number;
  /** Events whose merchant no longer has a webhook_url. */
  stored: number;
}

export type DeliveryResult =
  | { kind: 'stored'; event: ClaimedEvent }
  | { kind: 'posted'; event: ClaimedEvent; url: string; outcome: PostOutcome; decision: DeliveryDecision };

export function totalHandled(counts: DeliveryCounts): number {
  return counts.delivered + counts.failed + counts.retried + counts.stored;
}

/**
 * Runs fn in a transaction. Never retried: fn makes POSTs, and a blind re-run would send them again. `posts`: the most
 * POSTs fn makes back to back without a statement in between (its idle limit covers them all).
 */
export async function inDeliveryTransaction<T>(
  deps: Pick<WebhookDeps, 'pool'> & { config: Pick<WebhookDeps['config'], 'webhookTimeoutSeconds'> },
  fn: (tx: Queryable) => Promise<T>,
  posts = 1,
): Promise<T> {
  const idleTimeoutMs = Math.ceil(deps.config.webhookTimeoutSeconds * 1000) * posts + WEBHOOK_IDLE_IN_TRANSACTION_MARGIN_MS;
  return withTransactionOnce(deps.pool, { idleTimeoutMs }, fn);
}

type SigningSecrets = Awaited<ReturnType<typeof signingSecretsOf>> | SealedSecretError;

type Posted = Extract<DeliveryResult, { kind: 'posted' }> & { at: Date };

/**
 * One event of a claim, nothing recorded yet: an event whose merchant has no URL is stored, one whose endpoint is
 * disabled is held (both written here, no POST); any other is signed, POSTed and decided. `secrets` keeps each
 * merchant's signing secrets for the rest of the claim.
 */
async function deliverOne(
  tx: Queryable,
  deps: WebhookDeps,
  event: ClaimedEvent,
  secrets: Map<string, SigningSecrets>,
): Promise<Extract<DeliveryResult, { kind: 'stored' }> | Posted> {
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
  const at = deps.clock.now();
  const body = buildWebhookBody(event);
  let keys = secrets.get(event.merchantId);
  if (keys === undefined) {
    keys = await signingSecretsOf(tx, deps.config, event.merchantId, at).catch((error: unknown) => {
      if (error instanceof SealedSecretError) return error;
      throw error;
    });
    secrets.set(event.merchantId, keys);
  }
  const outcome: PostOutcome =
    keys instanceof SealedSecretError
      ? // Nothing we could sign with: sending unsigned (or with another key) would teach the receiver to accept forgeries.
        { statusCode: null, latencyMs: 0, error: `refused: ${keys.message}; rotate the merchant's webhook secret`, refused: true }
      : await postWebhook(
          url,
          body,
          buildWebhookHeaders(keys, event.id, Math.floor(at.getTime() / 1000), body),
          Math.round(deps.config.webhookTimeoutSeconds * 1000),
          destinationPolicy(deps.config),
          deps.resolver,
        );
  const decision = decideAfterDelivery({ attemptsBefore: event.attempts, outcome, attemptedAt: at, firstRetryDelaySeconds: deps.config.webhookRetryDelaySeconds });
  // A URL stored before credentials were refused must not copy its password into delivery records or answers.
  return { kind: 'posted', event, url: redactWebhookUrl(url), outcome, decision, at };
}

/** After the POSTs: every delivery and its decision recorded on `tx` in one statement, a 410 disabling the endpoint. */
async function recordOutcomes(tx: Queryable, deps: WebhookDeps, posted: readonly Posted[]): Promise<void> {
  if (posted.length === 0) return;
  await insertDeliveries(
    tx,
    posted.map(({ event, url, outcome, decision, at }) => ({
      delivery: {
        eventId: event.id,
        attempt: decision.attempts,
        url,
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        error: outcome.error === null ? null : truncateError(outcome.error),
        at,
      },
      decision,
    })),
  );
  for (const { event, outcome, decision, at } of posted) {
    if (decision.status === 'failed' && decision.disableEndpoint) {
      const reason = `HTTP ${outcome.statusCode} Gone at ${at.toISOString()}`;
      if (await markWebhookEndpointDisabled(tx, event.merchantId, at, reason)) {
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
  }
}

/**
 * One delivery for each event whose row lock `tx` holds, in order, one POST at a time (as the lanes always sent), then
 * every answer recorded on `tx` in one statement (decision 140). Once an endpoint answers 410 Gone, the claim's later
 * events of that merchant are held, not sent. Once a POST to it fails otherwise (a timeout, a refusal, an error
 * answer), the claim's later events of that merchant are not sent: they stay pending and due, untouched, so a slow
 * endpoint costs a claim one timeout, not one per event (decision 76). `shouldContinue` is asked before each POST:
 * a stopping worker leaves the rest pending. The caller commits, in a transaction whose idle limit covers
 * `events.length` POSTs.
 */
export async function deliverClaimed(
  tx: Queryable,
  deps: WebhookDeps,
  events: readonly ClaimedEvent[],
  shouldContinue: () => boolean = () => true,
): Promise<DeliveryResult[]> {
  const secrets = new Map<string, SigningSecrets>();
  const disabled = new Set<string>();
  const failing = new Set<string>();
  const results: DeliveryResult[] = [];
  const posted: Posted[] = [];
  // While traces are on, a payment's event is delivered in the payment's trace, linked to the claim's (decision 212).
  const traces = tracer().enabled ? await readTraceparents(tx, 'payment_intents', events.flatMap((e) => (e.paymentIntentId === null ? [] : [e.paymentIntentId]))) : null;
  const claim = tracer().current();
  for (const event of events) {
    if (results.length > 0 && !shouldContinue()) break;
    if (failing.has(event.merchantId)) continue; // left pending and due: a later claim tries again
    const parent = event.paymentIntentId === null ? undefined : traces?.get(event.paymentIntentId);
    const result = await tracer().inSpan('webhook.deliver', { kind: 'client', parent, links: [claim], attributes: deliveryAttributes(event) }, async (span) => {
      const outcome = await deliverOne(tx, deps, disabled.has(event.merchantId) ? { ...event, endpointDisabled: true } : event, secrets);
      if (outcome.kind === 'posted') {
        span.setAttributes({ 'http.response.status_code': outcome.outcome.statusCode ?? undefined, 'webhook.status': outcome.decision.status, 'webhook.attempt': outcome.decision.attempts });
        if (outcome.decision.status !== 'delivered') span.fail({ name: 'WebhookAttemptFailed', code: outcome.outcome.statusCode === null ? 'no_answer' : `HTTP ${outcome.outcome.statusCode}` });
      } else span.setAttributes({ 'webhook.status': 'stored' });
      return outcome;
    });
    results.push(result);
    if (result.kind !== 'posted') continue;
    posted.push(result);
    if (result.decision.status === 'failed' && result.decision.disableEndpoint) disabled.add(event.merchantId);
    else if (result.decision.status !== 'delivered') failing.add(event.merchantId);
  }
  await recordOutcomes(tx, deps, posted);
  return results;
}

/** Who and what a delivery is for: never its URL (it may carry credentials), headers, signature or body. */
function deliveryAttributes(event: ClaimedEvent): SpanAttributes {
  return {
    'webhook.event_id': event.id,
    'webhook.event_type': event.eventType,
    'merchant.id': event.merchantId,
    'payment_intent.id': event.paymentIntentId ?? undefined,
  };
}

function count(counts: DeliveryCounts, result: DeliveryResult): void {
  if (result.kind === 'stored') counts.stored++;
  else if (result.decision.status === 'delivered') counts.delivered++;
  else if (result.decision.status === 'failed') counts.failed++;
  else counts.retried++;
}

/** Metrics of a committed delivery: its outcome, and for a delivered one the time since the event was written. */
export function observeDelivery(deps: WebhookDeps, result: DeliveryResult): void {
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
  const batchSize = options.batchSize ?? WEBHOOK_BATCH_EVENTS_MAX;
  const concurrency = Math.max(1, Math.min(options.concurrency ?? WEBHOOK_LANES, batchSize));
  const shouldContinue = options.shouldContinue ?? (() => true);
  const now = deps.clock.now();
  const handled: string[] = [];
  const counts: DeliveryCounts = { delivered: 0, failed: 0, retried: 0, stored: 0 };
  let claimsLeft = batchSize;

  // Each lane claims its share of the batch at once and sends it in one transaction (decision 75). Lanes open one
  // after the other, each once the one before it claimed something (before its POSTs): with few events due, the
  // lanes that would find nothing never open a transaction (decision 77). A lane that fails (the database went away)
  // stops the others claiming; they finish what they hold.
  const perClaim = Math.ceil(batchSize / concurrency);
  await inLanes({
    max: concurrency,
    opening: 'on demand',
    take: () => {
      if (claimsLeft <= 0 || !shouldContinue()) return undefined;
      const take = Math.min(perClaim, claimsLeft);
      claimsLeft -= take;
      return take;
    },
    run: async (take, openLane) => {
      const results = await inDeliveryTransaction(
        deps,
        async (tx) => {
          const events = await claimDueEvents(tx, now, handled, take);
          handled.push(...events.map((e) => e.id));
          if (events.length > 0) openLane();
          return deliverClaimed(tx, deps, events, shouldContinue);
        },
        take,
      );
      for (const result of results) {
        count(counts, result);
        observeDelivery(deps, result);
      }
      return results.length >= take; // fewer: nothing more is due, or the worker is stopping
    },
  });
  return counts;
}
