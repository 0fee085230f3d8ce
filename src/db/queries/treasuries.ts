// The treasury wallet of each chain: one row per chain, written once, read at every start.
import type { Chain } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

/** Inserts the chain's treasury unless one exists; true when this call created it. */
export async function insertTreasury(
  db: Queryable,
  treasury: { chain: Chain; address: string; nativeCurrency: string; at: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO treasuries (chain, address, native_currency, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (chain) DO NOTHING`,
    [treasury.chain, treasury.address, treasury.nativeCurrency, treasury.at],
  );
  return rowCount === 1;
}

export async function readTreasuryAddress(db: Queryable, chain: Chain): Promise<string | null> {
  const { rows } = await db.query<{ address: string }>('SELECT address FROM treasuries WHERE chain = $1', [chain]);
  return rows[0]?.address ?? null;
}

/** Locks the chain's treasury row for the caller's transaction (one-time bookings at start-up). */
export async function lockTreasury(db: Queryable, chain: Chain): Promise<void> {
  await db.query('SELECT 1 FROM treasuries WHERE chain = $1 FOR UPDATE', [chain]);
}

/** How many payments are still open on each of `chains` (not settled, failed or otherwise final). */
export async function countOpenPayments(db: Queryable, chains: readonly Chain[], openStatuses: readonly string[]): Promise<Map<Chain, number>> {
  if (chains.length === 0) return new Map();
  const { rows } = await db.query<{ chain: Chain; open: number }>(
    `SELECT selected_chain AS chain, COUNT(*)::int AS open FROM payment_intents
      WHERE selected_chain = ANY($1::text[]) AND status = ANY($2::text[]) GROUP BY selected_chain`,
    [chains, openStatuses],
  );
  return new Map(rows.map((r) => [r.chain, r.open]));
}
