// The treasury wallet of each chain: one row per chain, written once, read at every start.
import type { Token } from '../../domain/token.js';
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

/** Records that the books hold `token` on `chain`; false when they already did (its opening is booked). */
export async function insertTreasuryToken(db: Queryable, chain: Chain, token: Token, at: Date): Promise<boolean> {
  const { rowCount } = await db.query('INSERT INTO treasury_tokens (chain, token, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [chain, token, at]);
  return rowCount === 1;
}

/** The tokens the books of `chain` hold. */
export async function readTreasuryTokens(db: Queryable, chain: Chain): Promise<Token[]> {
  const { rows } = await db.query<{ token: Token }>('SELECT token FROM treasury_tokens WHERE chain = $1 ORDER BY token', [chain]);
  return rows.map((r) => r.token);
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
