import type { Chain } from '../../chains/port.js';
import type { CandidateRoute, Priority, ScoringDetail } from '../../routing/score.js';
import type { Queryable } from '../pool.js';

export interface QuoteRow {
  id: string;
  merchant_id: string;
  amount_micros: bigint;
  priority: Priority;
  destinations: Partial<Record<Chain, string>>;
  candidate_routes: CandidateRoute[];
  recommended_route: Chain;
  scoring_details: ScoringDetail[];
  chain_health: Record<string, unknown>[];
  treasury_balances: Record<string, unknown>[];
  created_at: Date;
  expires_at: Date;
}

export async function insertQuote(db: Queryable, q: QuoteRow): Promise<void> {
  await db.query(
    `INSERT INTO quotes (id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route,
       scoring_details, chain_health, treasury_balances, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      q.id,
      q.merchant_id,
      q.amount_micros.toString(),
      q.priority,
      JSON.stringify(q.destinations),
      JSON.stringify(q.candidate_routes),
      q.recommended_route,
      JSON.stringify(q.scoring_details),
      JSON.stringify(q.chain_health),
      JSON.stringify(q.treasury_balances),
      q.created_at,
      q.expires_at,
    ],
  );
}

export async function findQuote(db: Queryable, id: string): Promise<QuoteRow | null> {
  const { rows } = await db.query<Omit<QuoteRow, 'amount_micros'> & { amount_micros: string }>(
    `SELECT id, merchant_id, amount_micros::text, priority, destinations, candidate_routes, recommended_route,
            scoring_details, chain_health, treasury_balances, created_at, expires_at FROM quotes WHERE id = $1`,
    [id],
  );
  const row = rows[0];
  return row ? { ...row, amount_micros: BigInt(row.amount_micros) } : null;
}
