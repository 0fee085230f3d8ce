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
    `SELECT t.chain, t.native_currency AS currency, COALESCE(a.balance, 0)::text AS balance
       FROM treasuries t
       LEFT JOIN ledger_accounts a ON a.chain = t.chain AND a.currency = t.native_currency AND a.kind = 'treasury_native'
      ORDER BY t.chain`,
  );
  return rows.map((r) => ({ chain: r.chain, currency: r.currency, units: BigInt(r.balance) }));
}
