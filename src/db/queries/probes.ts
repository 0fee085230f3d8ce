// Chain-health probes: every probe of a chain's RPC, kept for a window from which the collector derives error rate
// and latency percentiles.
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
export async function recentProbes(db: Queryable, chain: Chain, limit: number): Promise<{ ok: boolean; latencyMs: number }[]> {
  const { rows } = await db.query<{ ok: boolean; latency_ms: number }>(
    'SELECT ok, latency_ms FROM chain_probes WHERE chain = $1 ORDER BY created_at DESC, id DESC LIMIT $2',
    [chain, limit],
  );
  return rows.map((r) => ({ ok: r.ok, latencyMs: r.latency_ms }));
}

/** Deletes all but the chain's newest `keep` probes. */
export async function pruneProbes(db: Queryable, chain: Chain, keep: number): Promise<void> {
  await db.query(
    `DELETE FROM chain_probes WHERE chain = $1 AND id NOT IN
       (SELECT id FROM chain_probes WHERE chain = $1 ORDER BY created_at DESC, id DESC LIMIT $2)`,
    [chain, keep],
  );
}
