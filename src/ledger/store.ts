// The ledger's SQL: post a movement inside the caller's transaction, read balances.
import type { Chain } from '../chains/port.js';
import type { Queryable } from '../db/pool.js';
import { isBalanced, NON_NEGATIVE, type AccountKind, type Movement } from './movements.js';

export class LedgerInvariantError extends Error {
  override readonly name = 'LedgerInvariantError';
}

/**
 * Writes one balanced ledger transaction and updates the materialised balances. Accounts are updated in a fixed
 * order (currency, kind) so concurrent postings never deadlock. Must run inside the caller's transaction.
 */
export async function post(
  db: Queryable,
  movement: Movement,
  context: { paymentIntentId?: string | null; at: Date },
): Promise<number> {
  if (!isBalanced(movement.postings)) throw new LedgerInvariantError(`unbalanced ${movement.type} movement`);
  const ordered = [...movement.postings].sort((a, b) =>
    a.currency === b.currency ? a.kind.localeCompare(b.kind) : a.currency.localeCompare(b.currency),
  );
  // One round trip: the transaction row, the balance updates (rows locked in the order given) and the postings.
  const { rows } = await db.query<{ transaction_id: string; kind: AccountKind; balance: string }>(
    `WITH moved AS (
       INSERT INTO ledger_accounts AS a (chain, currency, kind, balance)
       SELECT $1, u.currency, u.kind, u.amount
         FROM unnest($2::text[], $3::text[], $4::numeric[]) WITH ORDINALITY AS u(currency, kind, amount, n)
        ORDER BY u.n
       ON CONFLICT (chain, currency, kind) DO UPDATE SET balance = a.balance + EXCLUDED.balance
       RETURNING a.id, a.currency, a.kind, a.balance
     ), tx AS (
       INSERT INTO ledger_transactions (type, chain, payment_intent_id, created_at) VALUES ($5, $1, $6, $7) RETURNING id
     ), posted AS (
       INSERT INTO ledger_postings (transaction_id, account_id, currency, amount)
       SELECT tx.id, moved.id, u.currency, u.amount
         FROM unnest($2::text[], $3::text[], $4::numeric[]) AS u(currency, kind, amount)
         JOIN moved ON moved.currency = u.currency AND moved.kind = u.kind
        CROSS JOIN tx
     )
     SELECT tx.id::text AS transaction_id, moved.kind, moved.balance::text AS balance FROM moved CROSS JOIN tx`,
    [
      movement.chain,
      ordered.map((p) => p.currency),
      ordered.map((p) => p.kind),
      ordered.map((p) => p.amount.toString()),
      movement.type,
      context.paymentIntentId ?? null,
      context.at,
    ],
  );
  for (const row of rows) {
    if (NON_NEGATIVE.includes(row.kind) && BigInt(row.balance) < 0n) {
      throw new LedgerInvariantError(`${movement.chain} ${row.kind} would go negative (${row.balance})`);
    }
  }
  return Number(rows[0]!.transaction_id);
}

/** Locks and returns an account's balance (0 when the account does not exist yet). */
export async function lockBalance(db: Queryable, chain: Chain, currency: string, kind: AccountKind): Promise<bigint> {
  const { rows } = await db.query<{ balance: string }>(
    'SELECT balance FROM ledger_accounts WHERE chain = $1 AND currency = $2 AND kind = $3 FOR UPDATE',
    [chain, currency, kind],
  );
  return rows[0] ? BigInt(rows[0].balance) : 0n;
}

export interface TreasuryBalance {
  chain: Chain;
  address: string;
  availableMicros: bigint;
  reservedMicros: bigint;
}

/** Available and reserved USDC per treasury. Reserved includes funds in flight: they are not final yet. */
export async function treasuryBalances(db: Queryable): Promise<TreasuryBalance[]> {
  const { rows } = await db.query<{ chain: Chain; address: string; available: string; reserved: string }>(
    `SELECT t.chain, t.address,
            COALESCE(SUM(a.balance) FILTER (WHERE a.kind = 'treasury_available'), 0)::text AS available,
            COALESCE(SUM(a.balance) FILTER (WHERE a.kind IN ('treasury_reserved', 'treasury_in_flight')), 0)::text AS reserved
       FROM treasuries t
       LEFT JOIN ledger_accounts a ON a.chain = t.chain AND a.currency = 'USDC'
      GROUP BY t.chain, t.address
      ORDER BY t.chain`,
  );
  return rows.map((r) => ({
    chain: r.chain,
    address: r.address,
    availableMicros: BigInt(r.available),
    reservedMicros: BigInt(r.reserved),
  }));
}
