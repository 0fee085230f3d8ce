// The failures view (GET /admin/failures): failed attempts and refusals before signing, counted together.
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

/** Failed attempts and refusals before signing, by reason and chain, most common first (GET /admin/failures). */
export async function countFailures(db: Queryable): Promise<{ failure_reason: string; chain: Chain; count: string }[]> {
  const { rows } = await db.query<{ failure_reason: string; chain: Chain; count: string }>(
    `SELECT failure_reason, chain, COUNT(*)::text AS count FROM (
       SELECT failure_reason, chain FROM payment_attempts WHERE status = 'failed' AND failure_reason IS NOT NULL
       UNION ALL
       SELECT reason, chain FROM sign_refusals
     ) f GROUP BY failure_reason, chain
      ORDER BY COUNT(*) DESC, failure_reason, chain`,
  );
  return rows;
}
