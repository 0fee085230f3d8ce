// Every ledger transaction of a payment intent with its postings, internal ones (settle) included: what an operator
// checks when a payment's money looks wrong. The merchant's view is entries.ts.
import type { Queryable } from '../db/pool.js';
import type { Chain } from '../domain/chain.js';
import type { AccountKind, LedgerTransactionType } from './movements.js';

export interface IntentLedgerTransaction {
  id: number;
  type: LedgerTransactionType;
  chain: Chain;
  createdAt: Date;
  postings: { account: AccountKind; currency: string; amountUnits: bigint }[];
}

export async function ledgerTransactionsOfIntent(db: Queryable, intentId: string): Promise<IntentLedgerTransaction[]> {
  const { rows } = await db.query<{
    id: string;
    type: LedgerTransactionType;
    chain: Chain;
    created_at: Date;
    kind: AccountKind;
    currency: string;
    amount: string;
  }>(
    `SELECT t.id::text, t.type, t.chain, t.created_at, a.kind, p.currency, p.amount::text
       FROM ledger_transactions t
       JOIN ledger_postings p ON p.transaction_id = t.id
       JOIN ledger_accounts a ON a.id = p.account_id
      WHERE t.payment_intent_id = $1
      ORDER BY t.id, p.id`,
    [intentId],
  );
  const byId = new Map<number, IntentLedgerTransaction>();
  for (const row of rows) {
    const id = Number(row.id);
    let transaction = byId.get(id);
    if (!transaction) {
      transaction = { id, type: row.type, chain: row.chain, createdAt: row.created_at, postings: [] };
      byId.set(id, transaction);
    }
    transaction.postings.push({ account: row.kind, currency: row.currency, amountUnits: BigInt(row.amount) });
  }
  return [...byId.values()];
}
