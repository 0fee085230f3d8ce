// POST /quotes: load health and balances, score (pure), persist the quote with everything it was decided from.
import { adapterOf } from '../../chains/port.js';
import { addSeconds } from '../../clock.js';
import { AppError } from '../../domain/errors.js';
import { GroupCommit } from '../../db/group-commit.js';
import type { FactTopic } from '../../db/notify.js';
import type { Pool } from '../../db/pool.js';
import { readPolicy } from '../../db/queries/policies.js';
import { readQuote, insertQuotes, type QuoteBalanceRecord, type QuoteHealthRecord, type QuoteRow } from '../../db/queries/quotes.js';
import { readLatestSnapshots, type SnapshotRow } from '../../db/queries/snapshots.js';
import { usdToNativeUnits } from '../../domain/gas.js';
import { readIntent, type PaymentIntentRow } from '../../db/queries/intents.js';
import { newId } from '../../ids.js';
import { usdcToNumber } from '../../money.js';
import { treasuryBalances, treasuryTokenAvailable, type TreasuryBalance } from '../../ledger/store.js';
import type { Priority } from '../../domain/priority.js';
import { scoreRoutes, type RouteInput } from '../../routing/score.js';
import { isToken, potOf, tokenFeeFactor, type Token } from '../../domain/token.js';
import { type Chain } from '../../domain/chain.js';
import type { AppContext } from '../context.js';
import { checkQuoteAmount } from '../merchants/policies.js';
import { screenedChains } from '../screening/screener.js';
import { QUOTE_WRITE_BATCH_MAX } from '../../bounds.js';
import { tracer } from '../../tracing/tracer.js';

export interface QuoteRequest {
  amountMicros: bigint;
  destinations: Partial<Record<Chain, string>>;
  priority: Priority;
  /** The tokens the recipient accepts, as asked (issue 40); absent: the spec's request, which pays USDC. */
  tokens?: readonly string[];
}

export type QuoteWriter = GroupCommit<QuoteRow, void>;

/** The quotes of a process created while one INSERT runs share the next (held by the context: group-commits.ts). */
export function createQuoteWriter(pool: Pool): QuoteWriter {
  return new GroupCommit<QuoteRow, void>(async (quotes) => {
    // With each quote, while traces are on, where its trace began: the payment made from it links to it.
    await insertQuotes(pool, quotes, { lazyFlush: true });
    return quotes.map(() => ({ ok: true as const, value: undefined }));
  }, QUOTE_WRITE_BATCH_MAX);
}

export type QuoteOutcome = { ok: true; quote: QuoteRow } | { ok: false; error: AppError };

/** POST /quotes: one quote, decided by the batch path and written with the quotes created at the same moment. */
export async function createQuote(ctx: AppContext, merchantId: string, request: QuoteRequest): Promise<QuoteRow> {
  const [outcome] = await decideQuotes(ctx, merchantId, [request]);
  if (!outcome!.ok) throw outcome!.error;
  // Shared with the quotes created at the same moment: one INSERT for all of them (decision 135).
  const traceparent = tracer().current();
  await ctx.groupCommits.quotes.submit(traceparent === null ? outcome!.quote : { ...outcome!.quote, traceparent });
  return outcome!.quote;
}

/**
 * The quotes of a merchant's `requests`, each decided from one read of the route inputs (policy, chain health,
 * balances); nothing is written, the caller stores them (createQuote, or a payout batch in its transaction). A
 * request that cannot be quoted gets its refusal.
 */
export async function decideQuotes(ctx: AppContext, merchantId: string, requests: readonly QuoteRequest[]): Promise<QuoteOutcome[]> {
  // Read together: the policy check (cheaper for the merchant than a refusal at reservation, which still checks it,
  // decision 7) costs no extra round trip in front of the route inputs.
  // From the process's cache when it has one (decision 136): the reservation checks the balance and the policy again
  // under its locks, so a quote decided from facts a few milliseconds old can only be refused later, never overspend.
  const facts = ctx.facts;
  const cached = <T>(topic: FactTopic, key: string, load: () => Promise<T>) => (facts ? facts.get(topic, key, load) : load());
  // A request naming a malformed address is refused before anything is asked about it (decision 185). Every other
  // destination named is screened, whether or not routing would pick its chain: a hit on one refuses its whole quote.
  // With only the local list set this is a map lookup per destination, no I/O; a provider is asked once per distinct
  // address of the batch, a few at a time.
  const malformed = requests.map((request) => malformedDestination(ctx, request));
  const recipients = requests.map((request, i) =>
    malformed[i]
      ? []
      : ctx.config.chainNames.flatMap((chain) => {
          const address = request.destinations[chain];
          return address === undefined ? [] : [{ chain, address, amountMicros: request.amountMicros }];
        }),
  );
  const namesTokens = requests.some((request) => request.tokens !== undefined);
  const [policy, snapshots, balances, verdicts, tokenAvailable] = await Promise.all([
    cached('policies', merchantId, () => readPolicy(ctx.pool, merchantId)),
    cached('health', '', () => readLatestSnapshots(ctx.pool, ctx.config)),
    cached('balances', '', () => treasuryBalances(ctx.pool)),
    ctx.screener.screen(recipients.flat()),
    // Only a quote naming tokens reads the balance of each: the spec's quotes read what they always read.
    namesTokens ? cached('balances', 'tokens', () => treasuryTokenAvailable(ctx.pool)) : new Map<string, bigint>(),
  ]);
  let next = 0;
  const screened = recipients.map((ofRequest) => screenedChains(ofRequest, verdicts.slice(next, (next += ofRequest.length))));
  const now = ctx.clock.now();
  return requests.map((request, i) => {
    if (malformed[i]) return { ok: false, error: malformed[i] };
    try {
      return { ok: true, quote: decideQuote(ctx, merchantId, request, { policy, snapshots, balances, tokenAvailable, screened: screened[i]! }, now) };
    } catch (error) {
      if (error instanceof AppError) return { ok: false, error };
      throw error;
    }
  });
}

interface RouteInputs {
  policy: Awaited<ReturnType<typeof readPolicy>>;
  snapshots: SnapshotRow[];
  balances: TreasuryBalance[];
  /** Available funds per (chain, token), keyed by potOf; read only when a request of the batch names tokens. */
  tokenAvailable: ReadonlyMap<string, bigint>;
  /** The chains whose named destination sanctions screening refuses. */
  screened: readonly string[];
}

/** The refusal of a request naming an address that is not one on its chain (or is the treasury), or null. */
function malformedDestination(ctx: AppContext, request: QuoteRequest): AppError | null {
  for (const chain of ctx.config.chainNames) {
    const address = request.destinations[chain];
    if (address !== undefined && !adapterOf(ctx.adapters, chain).isValidAddress(address)) {
      return new AppError('INVALID_DESTINATION', `destination.${chain}_address is not a valid ${chain} recipient (an address, not the treasury)`);
    }
  }
  return null;
}

/** One request's quote from the inputs read for its batch (its destinations well-formed); a refusal throws its AppError. */
function decideQuote(ctx: AppContext, merchantId: string, request: QuoteRequest, inputs: RouteInputs, now: Date): QuoteRow {
  const { policy, snapshots, balances, tokenAvailable, screened } = inputs;
  const tokens = request.tokens === undefined ? null : acceptedTokens(ctx, request.tokens);
  if (screened.length > 0) {
    throw new AppError('RECIPIENT_SCREENED', `the recipient on ${screened.join(', ')} is refused by sanctions screening`, {
      details: { chains: screened },
    });
  }
  checkQuoteAmount(ctx.config, merchantId, policy, request.amountMicros);
  const decision = scoreRoutes(
    request.amountMicros,
    request.priority,
    ctx.config.chainNames.flatMap((chain): RouteInput[] => {
      const snapshot = snapshots.find((s) => s.chain === chain)!;
      const balance = balances.find((b) => b.chain === chain);
      const destination = request.destinations[chain] ?? null;
      const gas = gasInput(ctx, chain, snapshot, balance);
      if (tokens === null) return [{ chain, snapshot, availableMicros: balance?.availableMicros ?? 0n, destination, gas }];
      // One route per token the recipient accepts and the chain pays, in the order asked, each priced by its own gas.
      const settings = ctx.config.chains[chain]!;
      return tokens
        .filter((token) => settings.tokens.some((t) => t.token === token))
        .map((token) => {
          const factor = tokenFeeFactor(settings.family, token);
          return {
            chain,
            token,
            snapshot: { ...snapshot, estimated_fee_usd: roundFeeUsd(snapshot.estimated_fee_usd * factor) },
            availableMicros: tokenAvailable.get(potOf(chain, token)) ?? 0n,
            destination,
            gas: gas && { ...gas, feeUnits: gas.feeUnits === null ? null : (gas.feeUnits * BigInt(Math.round(factor * 1000))) / 1000n },
          };
        });
    }),
  );
  if (decision.recommended === null) {
    const reasons = decision.details.filter((d) => d.disqualification_reason !== 'no_destination');
    if (reasons.length > 0 && reasons.every((d) => d.disqualification_reason === 'insufficient_balance')) {
      throw new AppError('INSUFFICIENT_BALANCE', 'treasury funds are insufficient for this amount on every requested chain');
    }
    const why = reasons.map((d) => `${d.chain}: ${d.disqualification_reason}`).join(', ');
    throw new AppError('NO_ROUTE_AVAILABLE', `no requested chain can take this payment right now (${why})`, {
      details: { scoring_details: decision.details },
    });
  }
  return {
    id: newId('quo'),
    merchant_id: merchantId,
    amount_micros: request.amountMicros,
    priority: request.priority,
    destinations: request.destinations,
    candidate_routes: decision.candidates,
    recommended_route: decision.recommended,
    tokens,
    recommended_token: decision.recommendedToken,
    scoring_details: decision.details,
    chain_health: snapshots.map(healthRecord),
    treasury_balances: balances.map(balanceRecord),
    created_at: now,
    expires_at: addSeconds(now, ctx.config.quoteTtlSeconds),
  };
}

/**
 * The tokens a request accepts, each one of the presets and configured on some chain; a refusal names the others.
 * Asked twice, a token counts once.
 */
function acceptedTokens(ctx: AppContext, asked: readonly string[]): Token[] {
  const configured = [...new Set(ctx.config.chainNames.flatMap((chain) => ctx.config.chains[chain]!.tokens.map((t) => t.token)))];
  const tokens = [...new Set(asked.map((token) => token.toLowerCase()))];
  const refused = tokens.find((token) => !isToken(token) || !configured.includes(token));
  if (refused !== undefined || tokens.length === 0) {
    throw new AppError('INVALID_TOKEN', `tokens must name at least one of ${configured.join(', ')}${refused === undefined ? '' : `; "${refused}" is not paid here`}`);
  }
  return tokens as Token[];
}

/** A token's fee in USD as a quote shows fees: to the micro-dollar. */
function roundFeeUsd(usd: number): number {
  return Math.round(usd * 1e6) / 1e6;
}

/** What a quote records of a chain's health snapshot (the admin views show a snapshot the same way). */
export function healthRecord(s: SnapshotRow): QuoteHealthRecord {
  return {
    chain: s.chain,
    health_status: s.health_status,
    estimated_fee_usd: s.estimated_fee_usd,
    avg_confirmation_seconds: s.avg_confirmation_seconds,
    rpc_error_rate: s.rpc_error_rate,
    p95_latency_ms: s.p95_latency_ms,
    congestion_score: s.congestion_score,
    recorded_at: s.created_at.toISOString(),
    status_reason: s.status_reason ?? null,
  };
}

/** What a quote records of a treasury's balance: USDC as JSON numbers. */
function balanceRecord(b: TreasuryBalance): QuoteBalanceRecord {
  return { chain: b.chain, available_balance: usdcToNumber(b.availableMicros), reserved_balance: usdcToNumber(b.reservedMicros) };
}

/**
 * The booked native balance against the next transfer's fee: the collector's native estimate, else the snapshot's USD
 * estimate at the configured price. Read from the same query as the USDC balances.
 */
function gasInput(ctx: AppContext, chain: Chain, snapshot: SnapshotRow, balance: TreasuryBalance | undefined) {
  if (!balance) return undefined;
  const adapter = adapterOf(ctx.adapters, chain);
  const price = ctx.config.chains[chain]!.nativeUsdPrice;
  const feeUnits = snapshot.estimated_fee_native ?? usdToNativeUnits(snapshot.estimated_fee_usd, price, adapter.nativeDecimals);
  return { bookedUnits: balance.nativeUnits, feeUnits };
}

/** GET /routes/debug/:id: the intent with the quote its route was decided from; null for another merchant's. */
export async function routeDecision(ctx: AppContext, merchantId: string, intentId: string): Promise<{ intent: PaymentIntentRow; quote: QuoteRow } | null> {
  const intent = await readIntent(ctx.pool, intentId);
  if (!intent || intent.merchant_id !== merchantId) return null;
  const quote = await readQuote(ctx.pool, intent.quote_id);
  if (!quote) throw new Error(`quote ${intent.quote_id} of ${intent.id} is missing`);
  return { intent, quote };
}
