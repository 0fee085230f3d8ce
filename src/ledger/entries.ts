// Ledger entries of one payment intent, in the spec's shape, derived from the postings.
import type { Chain } from '../chains/port.js';
import type { Queryable } from '../db/pool.js';
import { unitsToNumber } from '../money.js';
import { decimalsOf } from './currencies.js';
import { PUBLIC_ENTRY_TYPES } from './movements.js';

export interface LedgerEntryView {
  type: string;
  amount: number;
  currency: string;
  chain: Chain;
  created_at: string;
}

export async function ledgerEntriesByIntent(db: Queryable, intentIds: readonly string[]): Promise<Map<string, LedgerEntryView[]>> {
  const byIntent = new Map<string, LedgerEntryView[]>();
  if (intentIds.length === 0) return byIntent;
  const { rows } = await db.query<{
    payment_intent_id: string;
    type: string;
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
    list.push({
      type: row.type,
      amount: unitsToNumber(BigInt(row.amount), decimalsOf(row.currency)),
      currency: row.currency,
      chain: row.chain,
      created_at: row.created_at.toISOString(),
    });
    byIntent.set(row.payment_intent_id, list);
  }
  return byIntent;
}
