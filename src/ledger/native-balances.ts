// The native currency (ETH, SOL) each treasury holds for fees, as the ledger books it.
import type { Queryable } from '../db/pool.js';
import type { Chain, NativeCurrency } from '../domain/chain.js';

export interface NativeBalance {
  chain: Chain;
  currency: NativeCurrency;
  /** Smallest units: wei, lamports. */
  units: bigint;
}

export async function treasuryNativeBalances(db: Queryable): Promise<NativeBalance[]> {
  const { rows } = await db.query<{ chain: Chain; currency: NativeCurrency; balance: string }>(
    `SELECT t.chain, t.native_currency AS currency, COALESCE(SUM(a.balance), 0)::text AS balance
       FROM treasuries t
       LEFT JOIN ledger_accounts a ON a.chain = t.chain AND a.currency = t.native_currency AND a.kind = 'treasury_native'
      GROUP BY t.chain, t.native_currency
      ORDER BY t.chain`,
  );
  return rows.map((r) => ({ chain: r.chain, currency: r.currency, units: BigInt(r.balance) }));
}

/** Whether native currency was ever booked into the chain's treasury as funding (its opening balance included). */
export async function hasNativeFunding(db: Queryable, chain: Chain): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM ledger_transactions t
       JOIN ledger_postings p ON p.transaction_id = t.id
       JOIN ledger_accounts a ON a.id = p.account_id
      WHERE t.type = 'funding' AND t.chain = $1 AND a.chain = $1 AND a.kind = 'treasury_native'
      LIMIT 1`,
    [chain],
  );
  return (rowCount ?? 0) > 0;
}
