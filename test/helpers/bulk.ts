// Many settled payments of one merchant at once, straight in SQL (the lifecycle would take minutes for thousands):
// for tests that need more rows than a page, or than a socket holds. No attempts, history or ledger postings.
import type { Queryable } from '../../src/db/pool.js';
import { SOL_ADDRESS } from './context.js';

/**
 * `count` payments of `merchantId` (created with a quote of its own), ids `pi_<merchant>_<n>`, amounts n micro-USDC,
 * created from `startIso` every `stepMs` milliseconds, `tiesPerInstant` to each instant (ties straddle page boundaries),
 * ids running against time so that only the id breaks a tie.
 */
export async function insertBulkPayments(
  db: Queryable,
  merchantId: string,
  count: number,
  options: { startIso: string; stepMs: number; tiesPerInstant?: number },
): Promise<void> {
  await db.query(`INSERT INTO merchants (id, name, webhook_url, created_at) VALUES ($1, 'Bulk', NULL, now())`, [merchantId]);
  await db.query(
    `INSERT INTO quotes (id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route,
        scoring_details, chain_health, treasury_balances, created_at, expires_at)
     VALUES ('quo_' || $1, $1, 1000000, 'fast', '{}', '[]', 'solana', '[]', '[]', '[]', now(), now())`,
    [merchantId],
  );
  await db.query(
    `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain, destination_address, created_at, updated_at)
     SELECT 'pi_' || $1 || '_' || lpad(($2::int + 1 - g)::text, 7, '0'), $1, 'quo_' || $1, 'bulk-' || g, g, 'settled', 'solana', $3,
            $4::timestamptz + (g / $6::int) * $5::int * interval '1 millisecond', now()
       FROM generate_series(1, $2::int) g`,
    [merchantId, count, SOL_ADDRESS, options.startIso, options.stepMs, options.tiesPerInstant ?? 1],
  );
  await db.query('ANALYZE payment_intents');
}
