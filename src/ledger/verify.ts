// Proves the ledger from its postings: every transaction balances per currency, every materialised balance equals
// the sum of its postings, no treasury account is negative, and every payment intent's entries tell one story.
import type { Queryable } from '../db/pool.js';

export interface LedgerProblem {
  check: string;
  detail: string;
}

export interface LedgerReport {
  ok: boolean;
  transactions: number;
  postings: number;
  accounts: number;
  problems: LedgerProblem[];
}

const LIMIT = 100; // problems reported per check; enough to act on, bounded output

export async function verifyLedger(db: Queryable): Promise<LedgerReport> {
  const problems: LedgerProblem[] = [];
  const add = (check: string, rows: Record<string, unknown>[]) => {
    for (const row of rows) problems.push({ check, detail: JSON.stringify(row) });
  };

  add(
    'transaction_balances',
    (
      await db.query(
        `SELECT transaction_id, currency, SUM(amount)::text AS sum FROM ledger_postings
          GROUP BY transaction_id, currency HAVING SUM(amount) <> 0 ORDER BY transaction_id LIMIT ${LIMIT}`,
      )
    ).rows,
  );
  add(
    'transaction_has_postings',
    (
      await db.query(
        `SELECT t.id FROM ledger_transactions t LEFT JOIN ledger_postings p ON p.transaction_id = t.id
          GROUP BY t.id HAVING COUNT(p.id) < 2 LIMIT ${LIMIT}`,
      )
    ).rows,
  );
  add(
    'account_balance_equals_postings',
    (
      await db.query(
        `SELECT a.id, a.chain, a.currency, a.kind, a.balance::text AS balance, COALESCE(SUM(p.amount), 0)::text AS postings
           FROM ledger_accounts a LEFT JOIN ledger_postings p ON p.account_id = a.id
          GROUP BY a.id HAVING a.balance <> COALESCE(SUM(p.amount), 0) LIMIT ${LIMIT}`,
      )
    ).rows,
  );
  add(
    'posting_currency_matches_account',
    (
      await db.query(
        `SELECT p.id, p.currency, a.currency AS account_currency FROM ledger_postings p
           JOIN ledger_accounts a ON a.id = p.account_id WHERE p.currency <> a.currency LIMIT ${LIMIT}`,
      )
    ).rows,
  );
  add(
    'treasury_not_negative',
    (
      await db.query(
        `SELECT chain, currency, kind, balance::text AS balance FROM ledger_accounts
          WHERE kind IN ('treasury_available', 'treasury_reserved', 'treasury_in_flight') AND balance < 0`,
      )
    ).rows,
  );
  // Per intent: one reserve of the intent's amount; at most one debit; settled -> settle of the amount and no
  // release; failed/cancelled -> released exactly what was reserved; open -> nothing released or settled.
  add(
    'payment_intent_story',
    (
      await db.query(
        `WITH amounts AS (
           SELECT t.payment_intent_id AS id, t.type, COUNT(DISTINCT t.id) AS n, SUM(p.amount) AS total
             FROM ledger_transactions t JOIN ledger_postings p ON p.transaction_id = t.id AND p.amount > 0 AND p.currency = 'USDC'
            WHERE t.payment_intent_id IS NOT NULL GROUP BY t.payment_intent_id, t.type)
         SELECT pi.id, pi.status FROM payment_intents pi
           LEFT JOIN amounts r ON r.id = pi.id AND r.type = 'reserve'
           LEFT JOIN amounts d ON d.id = pi.id AND d.type = 'debit'
           LEFT JOIN amounts s ON s.id = pi.id AND s.type = 'settle'
           LEFT JOIN amounts l ON l.id = pi.id AND l.type = 'release'
          WHERE r.n IS DISTINCT FROM 1 OR r.total <> pi.amount_micros
             OR COALESCE(d.n, 0) > 1 OR (d.n = 1 AND d.total <> pi.amount_micros)
             OR (pi.status = 'settled' AND (s.total IS DISTINCT FROM pi.amount_micros OR l.n IS NOT NULL))
             OR (pi.status IN ('failed', 'cancelled', 'expired') AND (l.total IS DISTINCT FROM pi.amount_micros OR s.n IS NOT NULL))
             OR (pi.status NOT IN ('settled', 'failed', 'cancelled', 'expired') AND (l.n IS NOT NULL OR s.n IS NOT NULL))
          LIMIT ${LIMIT}`,
      )
    ).rows,
  );

  const counts = (
    await db.query<{ transactions: string; postings: string; accounts: string }>(
      `SELECT (SELECT COUNT(*) FROM ledger_transactions)::text AS transactions,
              (SELECT COUNT(*) FROM ledger_postings)::text AS postings,
              (SELECT COUNT(*) FROM ledger_accounts)::text AS accounts`,
    )
  ).rows[0]!;
  return {
    ok: problems.length === 0,
    transactions: Number(counts.transactions),
    postings: Number(counts.postings),
    accounts: Number(counts.accounts),
    problems,
  };
}
