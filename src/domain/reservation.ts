// The reservation decision for a batch of payment-intent creations that share one transaction. Pure: the facts were
// loaded (and locked) by the caller; time comes in as `now`. Requests are decided in arrival order, so a batch gives
// exactly what the same requests one after another would: an earlier request's reservation is spent before a later
// one is checked, and a key repeated within the batch replays the intent the first request with it created. A refused
// request stores nothing, so it claims no key: the next request with that key is decided as if it came first (decision
// 80).
import { formatUsdc } from '../money.js';
import type { Chain } from './chain.js';
import { currencyOf, potOf, type Token } from './token.js';
import type { ErrorCode } from './errors.js';

export interface ReservationRequest {
  merchantId: string;
  quoteId: string;
  idempotencyKey: string;
  /** The trace of the request that asks for it (a W3C traceparent), while traces are on: the payment's trace. */
  traceparent?: string | null;
}

export interface QuoteFacts {
  id: string;
  merchantId: string;
  amountMicros: bigint;
  expiresAt: Date;
  chain: Chain;
  /** The token it pays (issue 40): its funds are the treasury's in that token on that chain. */
  token: Token;
  destination: string;
}

export interface ExistingIntent {
  id: string;
  quoteId: string;
}

export type Refusal = { code: ErrorCode; message: string; details?: Record<string, unknown> };

export type ReservationDecision =
  /** The key was used before (in an earlier transaction or earlier in this batch) with this quote: replay it. */
  | { kind: 'replay'; intentId: string }
  /**
   * A new intent: reserve the quote's amount on its chain. `position` names the new intent among the batch's;
   * `approvalAboveMicros` is the threshold it is above when an operator must approve it before it is sent.
   */
  | { kind: 'reserve'; quote: QuoteFacts; position: number; approvalAboveMicros: bigint | null }
  /** The key created an intent earlier in this batch with the same quote: this request gets that intent, replayed. */
  | { kind: 'same_as'; index: number }
  | { kind: 'refuse'; refusal: Refusal };

export interface BatchFacts {
  /** Intents already stored, by `${merchantId}\u0000${idempotencyKey}`. */
  existing: ReadonlyMap<string, ExistingIntent>;
  quotes: ReadonlyMap<string, QuoteFacts>;
  /** Available funds per (chain, token), keyed by potOf, read under the treasury rows' locks. */
  available: ReadonlyMap<string, bigint>;
  now: Date;
  /**
   * The spending policy of a request that may be reserved, given what this batch already reserved for its merchant,
   * and how much of that it sends without approval: a refusal, or the approval threshold it is above (null: none).
   * Without it, nothing is refused and nothing waits.
   */
  check?: (
    request: ReservationRequest,
    quote: QuoteFacts,
    reservedInBatchMicros: bigint,
    sentInBatchMicros: bigint,
  ) => Refusal | { approvalAboveMicros: bigint | null };
}

export function keyOf(merchantId: string, idempotencyKey: string): string {
  return `${merchantId}\u0000${idempotencyKey}`;
}

export function decideReservations(requests: readonly ReservationRequest[], facts: BatchFacts): ReservationDecision[] {
  const left = new Map(facts.available);
  /** What this batch reserved so far, per merchant (their daily limits count it), and of it what goes unapproved. */
  const reservedBy = new Map<string, bigint>();
  const sentBy = new Map<string, bigint>();
  /** Keys that create an intent in this batch: the request that creates it, and its quote. Refusals claim none. */
  const claimed = new Map<string, { index: number; quoteId: string }>();
  const decisions: ReservationDecision[] = [];
  let created = 0;
  for (const [index, request] of requests.entries()) {
    const key = keyOf(request.merchantId, request.idempotencyKey);
    const stored = facts.existing.get(key);
    const earlier = claimed.get(key);
    const usedWith = stored?.quoteId ?? earlier?.quoteId;
    if (usedWith !== undefined) {
      if (usedWith !== request.quoteId) {
        decisions.push(refuse('IDEMPOTENCY_KEY_REUSED', `idempotency_key was already used with quote ${usedWith}; use a new key for a different payment`));
        continue;
      }
      if (stored) {
        decisions.push({ kind: 'replay', intentId: stored.id });
        continue;
      }
      decisions.push({ kind: 'same_as', index: earlier!.index });
      continue;
    }
    const quote = facts.quotes.get(request.quoteId);
    if (!quote || quote.merchantId !== request.merchantId) {
      decisions.push(refuse('QUOTE_NOT_FOUND', `quote ${request.quoteId} was not found`));
      continue;
    }
    if (quote.expiresAt.getTime() <= facts.now.getTime()) {
      decisions.push(refuse('QUOTE_EXPIRED', `quote ${quote.id} expired at ${quote.expiresAt.toISOString()}; request a new quote`));
      continue;
    }
    const spending = facts.check?.(request, quote, reservedBy.get(request.merchantId) ?? 0n, sentBy.get(request.merchantId) ?? 0n) ?? {
      approvalAboveMicros: null,
    };
    if ('code' in spending) {
      decisions.push({ kind: 'refuse', refusal: spending });
      continue;
    }
    const pot = potOf(quote.chain, quote.token);
    const available = left.get(pot) ?? 0n;
    if (available < quote.amountMicros) {
      decisions.push(
        refuse(
          'INSUFFICIENT_BALANCE',
          `treasury on ${quote.chain} has ${formatUsdc(available)} ${currencyOf(quote.token)} available, ${formatUsdc(quote.amountMicros)} needed`,
        ),
      );
      continue;
    }
    claimed.set(key, { index, quoteId: request.quoteId });
    left.set(pot, available - quote.amountMicros);
    reservedBy.set(request.merchantId, (reservedBy.get(request.merchantId) ?? 0n) + quote.amountMicros);
    if (spending.approvalAboveMicros === null) sentBy.set(request.merchantId, (sentBy.get(request.merchantId) ?? 0n) + quote.amountMicros);
    decisions.push({ kind: 'reserve', quote, position: created++, approvalAboveMicros: spending.approvalAboveMicros });
  }
  return decisions;
}

/**
 * A payout batch is decided whole (decision 178): when what it reserves is above its merchant's approval threshold,
 * or any of its payments waits for approval on its own (the threshold, the limit per day), every payment it reserves
 * waits, and one decision sends or fails them all. Returns the threshold the batch waits at, or null: none waits.
 */
export function batchHold(decisions: readonly ReservationDecision[], approvalAboveMicros: bigint | null): bigint | null {
  let total = 0n;
  let held: bigint | null = null;
  for (const decision of decisions) {
    if (decision.kind !== 'reserve') continue;
    total += decision.quote.amountMicros;
    held ??= decision.approvalAboveMicros;
  }
  if (approvalAboveMicros !== null && total > approvalAboveMicros) return approvalAboveMicros;
  return held;
}

function refuse(code: ErrorCode, message: string): ReservationDecision {
  return { kind: 'refuse', refusal: { code, message } };
}
