// Ledger entries of payment intents, derived from the postings: one entry per ledger transaction and currency, its
// amount what moved (the positive side). The API shows them in the spec's shape (src/api/views).
import type { Queryable } from '../db/pool.js';
import type { Chain } from '../domain/chain.js';
import { PUBLIC_ENTRY_TYPES, type LedgerTransactionType } from './movements.js';

export interface LedgerEntry {
  type: LedgerTransactionType;
  /** In the currency's smallest unit (USDC micro-units, wei, lamports). */
  amountUnits: bigint;
  currency: string;
  chain: Chain;
  createdAt: Date;
}

export async function ledgerEntriesByIntent(db: Queryable, intentIds: readonly string[]): Promise<Map<string, LedgerEntry[]>> {
  const byIntent = new Map<string, LedgerEntry[]>();
  if (intentIds.length === 0) return byIntent;
  const { rows } = await db.query<{
    payment_intent_id: string;
    type: LedgerTransactionType;
    chain: Chain;
    currency: string;
    amount: string;
    created_at: Date;
  }>(
    `SELECT t.payment_intent_id, t.type, t.chain, p.currency, SUM(p.amount)::text AS amount, t.created_at
       FROM ledger_transactions t
       JOIN ledger_postings p ON p.transaction_id = t.id AND p.amount > 0
      WHERE t.payment_intent_id = ANY($1) AND t.type = ANY($2)
      GROUP BY t.id, t.payment_intent_id, t.type, t.chain, p.currency, t.created_at
      ORDER BY t.id`,
    [intentIds, PUBLIC_ENTRY_TYPES],
  );
  for (const row of rows) {
    const list = byIntent.get(row.payment_intent_id) ?? [];
    list.push({ type: row.type, amountUnits: BigInt(row.amount), currency: row.currency, chain: row.chain, createdAt: row.created_at });
    byIntent.set(row.payment_intent_id, list);
  }
  return byIntent;
}
