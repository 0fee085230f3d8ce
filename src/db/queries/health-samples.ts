// What the chain-health collector samples: every probe of a chain's RPC, kept for a window from which it derives
// error rate and latency percentiles, and the settlement times the chain actually gave our transfers.
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export async function insertProbe(
  db: Queryable,
  probe: { chain: Chain; ok: boolean; latencyMs: number; error: string | null; at: Date },
): Promise<void> {
  await db.query('INSERT INTO chain_probes (chain, ok, latency_ms, error, created_at) VALUES ($1, $2, $3, $4, $5)', [
    probe.chain,
    probe.ok,
    probe.latencyMs,
    probe.error,
    probe.at,
  ]);
}

/** The chain's last `limit` probes, newest first. */
export async function listRecentProbes(db: Queryable, chain: Chain, limit: number): Promise<{ ok: boolean; latencyMs: number }[]> {
  const { rows } = await db.query<{ ok: boolean; latency_ms: number }>(
    'SELECT ok, latency_ms FROM chain_probes WHERE chain = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    [chain, limit],
  );
  return rows.map((r) => ({ ok: r.ok, latencyMs: r.latency_ms }));
}

/** Deletes all but the chain's newest `keep` probes. */
export async function deleteOldProbes(db: Queryable, chain: Chain, keep: number): Promise<void> {
  await db.query(
    `DELETE FROM chain_probes WHERE chain = $1 AND id NOT IN
       (SELECT id FROM chain_probes WHERE chain = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`,
    [chain, keep],
  );
}

/** Mean seconds from broadcast to confirmation of the chain's last `limit` confirmed attempts, with the sample size. */
export async function readRecentSettlementSeconds(db: Queryable, chain: Chain, limit: number): Promise<{ samples: number; avgSeconds: number | null }> {
  const { rows } = await db.query<{ n: string; avg: number | null }>(
    `SELECT COUNT(*)::text AS n, AVG(EXTRACT(EPOCH FROM (confirmed_at - broadcast_at)))::float8 AS avg
       FROM (SELECT confirmed_at, broadcast_at FROM payment_attempts
              WHERE chain = $1 AND status = 'confirmed' AND broadcast_at IS NOT NULL
              ORDER BY confirmed_at DESC LIMIT $2) recent`,
    [chain, limit],
  );
  return { samples: Number(rows[0]?.n ?? 0), avgSeconds: rows[0]?.avg ?? null };
}
