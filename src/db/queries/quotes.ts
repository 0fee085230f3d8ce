import type { Chain } from '../../domain/chain.js';
import type { Token } from '../../domain/token.js';
import type { Priority } from '../../domain/priority.js';
import type { CandidateRoute, ScoringDetail } from '../../routing/score.js';
import type { Queryable } from '../pool.js';

/**
 * What a quote saw of a chain's health, as stored with it (and shown by GET /routes/debug as stored): a quote is an
 * immutable record of what its route was decided from.
 */
export interface QuoteHealthRecord {
  chain: Chain;
  health_status: string;
  estimated_fee_usd: number;
  avg_confirmation_seconds: number;
  rpc_error_rate: number;
  p95_latency_ms: number | null;
  congestion_score: number | null;
  recorded_at: string;
  /** Why the status is worse than the probes say (low gas); absent from quotes recorded before it existed. */
  status_reason?: string | null;
}

/** A treasury balance as the quote saw it, in USDC (JSON numbers; the record is for reading, never for money). */
export interface QuoteBalanceRecord {
  chain: Chain;
  available_balance: number;
  reserved_balance: number;
}

export interface QuoteRow {
  id: string;
  merchant_id: string;
  amount_micros: bigint;
  priority: Priority;
  destinations: Partial<Record<Chain, string>>;
  candidate_routes: CandidateRoute[];
  recommended_route: Chain;
  /** The tokens the request accepted (issue 40); null: it named none, and pays USDC as the spec's quotes do. */
  tokens: Token[] | null;
  recommended_token: Token;
  scoring_details: ScoringDetail[];
  chain_health: QuoteHealthRecord[];
  treasury_balances: QuoteBalanceRecord[];
  created_at: Date;
  expires_at: Date;
  /** The trace of the request that made it (a W3C traceparent), while traces are on. */
  traceparent?: string;
}

/**
 * Several quotes in one statement (the quote group commit). `lazyFlush`, for a statement that is its own transaction:
 * its commit does not wait for the disk (decision 135); never inside a transaction that moves money.
 */
export async function insertQuotes(db: Queryable, quotes: readonly QuoteRow[], options: { lazyFlush?: boolean } = {}): Promise<void> {
  if (quotes.length === 0) return;
  const json = (pick: (q: QuoteRow) => unknown) => quotes.map((q) => JSON.stringify(pick(q)));
  // set_config(..., true) lasts until the end of this statement's own transaction, whose commit reads it.
  const lazy = options.lazyFlush ? `, (SELECT set_config('synchronous_commit', 'off', true)) AS lazy` : '';
  await db.query(
    `INSERT INTO quotes (id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route,
       scoring_details, chain_health, treasury_balances, created_at, expires_at, traceparent, tokens, recommended_token)
     SELECT q.id, q.merchant_id, q.amount_micros, q.priority, q.destinations, q.candidate_routes, q.recommended_route,
            q.scoring_details, q.chain_health, q.treasury_balances, q.created_at, q.expires_at, q.traceparent,
            CASE WHEN q.tokens IS NULL THEN NULL ELSE string_to_array(q.tokens, ',') END, q.recommended_token
       FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[], $8::jsonb[],
                   $9::jsonb[], $10::jsonb[], $11::timestamptz[], $12::timestamptz[], $13::text[], $14::text[], $15::text[])
         AS q(id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route, scoring_details,
              chain_health, treasury_balances, created_at, expires_at, traceparent, tokens, recommended_token)${lazy}`,
    [
      quotes.map((q) => q.id),
      quotes.map((q) => q.merchant_id),
      quotes.map((q) => q.amount_micros.toString()),
      quotes.map((q) => q.priority),
      json((q) => q.destinations),
      json((q) => q.candidate_routes),
      quotes.map((q) => q.recommended_route),
      json((q) => q.scoring_details),
      json((q) => q.chain_health),
      json((q) => q.treasury_balances),
      quotes.map((q) => q.created_at),
      quotes.map((q) => q.expires_at),
      quotes.map((q) => q.traceparent ?? null),
      quotes.map((q) => q.tokens?.join(',') ?? null),
      quotes.map((q) => q.recommended_token),
    ],
  );
}

/** What a reservation decides from: a quote's terms, not the scoring it was chosen by. */
export interface QuoteTerms {
  id: string;
  merchant_id: string;
  amount_micros: bigint;
  expires_at: Date;
  recommended_route: Chain;
  recommended_token: Token;
  /** The destination on the recommended chain; null only for a quote stored without one (never written so). */
  destination: string | null;
}

/**
 * The terms of several quotes, for the reservation batch: only the columns it uses, so the scoring, health and
 * balance records (most of a quote row) are neither sent nor parsed.
 */
export async function readQuoteTerms(db: Queryable, ids: readonly string[]): Promise<QuoteTerms[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<Omit<QuoteTerms, 'amount_micros'> & { amount_micros: string }>(
    `SELECT id, merchant_id, amount_micros::text, expires_at, recommended_route, recommended_token, destinations ->> recommended_route AS destination
       FROM quotes WHERE id = ANY($1)`,
    [ids],
  );
  return rows.map((row) => ({ ...row, amount_micros: BigInt(row.amount_micros) }));
}

export async function readQuote(db: Queryable, id: string): Promise<QuoteRow | null> {
  const { rows } = await db.query<Omit<QuoteRow, 'amount_micros'> & { amount_micros: string }>(
    `SELECT id, merchant_id, amount_micros::text, priority, destinations, candidate_routes, recommended_route,
            scoring_details, chain_health, treasury_balances, created_at, expires_at, tokens, recommended_token FROM quotes WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? { ...row, amount_micros: BigInt(row.amount_micros) } : null;
}

/** What several quotes were asked for (amount, destinations, priority): a payout batch's replayed items compare them. */
export async function readQuoteRequests(db: Queryable, ids: readonly string[]): Promise<Pick<QuoteRow, 'id' | 'amount_micros' | 'destinations' | 'priority'>[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.query<Pick<QuoteRow, 'id' | 'destinations' | 'priority'> & { amount_micros: string }>(
    'SELECT id, amount_micros::text, destinations, priority FROM quotes WHERE id = ANY($1)',
    [ids],
  );
  return rows.map((row) => ({ ...row, amount_micros: BigInt(row.amount_micros) }));
}
