// What every seeded bench database starts with: 20 merchants (mer_b1..mer_b20) and one quote each (quo_bN), which
// the seeded payments point at.
import type { Queryable } from '../../src/db/pool.js';

/** `nameSql`: the merchant's name as SQL over `g`, the merchant's number (1 to 20). */
export async function seedMerchantsAndQuotes(db: Queryable, nameSql = `'Bench merchant ' || g`): Promise<void> {
  await db.query(`INSERT INTO merchants (id, name, webhook_url, created_at)
    SELECT 'mer_b' || g, ${nameSql}, NULL, now() FROM generate_series(1, 20) g`);
  await db.query(`INSERT INTO quotes (id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route,
      scoring_details, chain_health, treasury_balances, created_at, expires_at)
    SELECT 'quo_b' || g, 'mer_b' || g, 1000000, 'fast', '{}', '[]', 'solana', '[]', '[]', '[]', now(), now() FROM generate_series(1, 20) g`);
}
