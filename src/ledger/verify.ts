// Proves the ledger from its postings: every transaction balances per currency, every materialised balance equals
// the sum of its postings, no treasury account is negative, every payment intent's entries tell one story, and
// every inbound transfer the deposit scanner saw is booked exactly once.
import { withReadSnapshot, type Pool, type Queryable } from '../db/pool.js';
import { LEDGER_VERIFY_PROBLEMS_MAX } from '../bounds.js';

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

/**
 * Every check, on one snapshot (decision 19). The checks read whole tables, so their joins are hash joins: nested
 * loops are turned off for the transaction, because a plan chosen from missing or stale statistics (a fresh bulk of
 * payments, autovacuum off) nested a scan of every ledger transaction inside a scan of every payment, and took minutes
 * on 18k payments where hash joins take a third of a second.
 */
export async function verifyLedger(pool: Pool): Promise<LedgerReport> {
  return withReadSnapshot(pool, async (tx) => {
    await tx.query('SET LOCAL enable_nestloop = off');
    return runChecks(tx);
  });
}

async function runChecks(db: Queryable): Promise<LedgerReport> {
  const problems: LedgerProblem[] = [];
  const add = (check: string, rows: Record<string, unknown>[]) => {
    for (const row of rows) problems.push({ check, detail: JSON.stringify(row) });
  };

  add(
    'transaction_balances',
    (
      await db.query(
        `SELECT transaction_id, currency, SUM(amount)::text AS sum FROM ledger_postings
          GROUP BY transaction_id, currency HAVING SUM(amount) <> 0 ORDER BY transaction_id LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );
  add(
    'transaction_has_postings',
    (
      await db.query(
        `SELECT t.id FROM ledger_transactions t LEFT JOIN ledger_postings p ON p.transaction_id = t.id
          GROUP BY t.id HAVING COUNT(p.id) < 2 LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );
  add(
    'account_balance_equals_postings',
    (
      await db.query(
        `SELECT a.id, a.chain, a.currency, a.kind, a.balance::text AS balance, COALESCE(SUM(p.amount), 0)::text AS postings
           FROM ledger_accounts a LEFT JOIN ledger_postings p ON p.account_id = a.id
          GROUP BY a.id HAVING a.balance <> COALESCE(SUM(p.amount), 0) LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );
  add(
    'posting_currency_matches_account',
    (
      await db.query(
        `SELECT p.id, p.currency, a.currency AS account_currency FROM ledger_postings p
           JOIN ledger_accounts a ON a.id = p.account_id WHERE p.currency <> a.currency LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );
  add(
    'treasury_not_negative',
    (
      await db.query(
        `SELECT chain, currency, kind, SUM(balance)::text AS balance FROM ledger_accounts
          WHERE kind IN ('treasury_available', 'treasury_reserved', 'treasury_in_flight')
          GROUP BY chain, currency, kind HAVING SUM(balance) < 0`,
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
             FROM ledger_transactions t JOIN payment_intents i ON i.id = t.payment_intent_id
             -- The payment's own token (issue 40): a USDT payment books USDT, whose currency code is its token's.
             JOIN ledger_postings p ON p.transaction_id = t.id AND p.amount > 0 AND p.currency = upper(i.token)
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
          LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );

  // Inbound transfers (decision 20): each one the scanner saw is booked by exactly the transactions its row names,
  // each moving its amount into the treasury (or, for an attached one's reversal, back out of available); no ledger
  // transaction books two transfers; every refund is one inbound transfer's, at most one per payment and no more than
  // the payout.
  add(
    'inbound_transfer_booked_once',
    (
      await db.query(
        `WITH booked AS (
           SELECT i.id, i.chain, i.tx_id, i.transfer_index, i.currency, i.amount, i.payment_intent_id, b.role, b.transaction_id
             FROM inbound_transfers i
            CROSS JOIN LATERAL (VALUES ('funding', i.funding_transaction_id), ('refund', i.refund_transaction_id),
                                       ('reversal', i.reversal_transaction_id)) AS b(role, transaction_id)
            WHERE b.transaction_id IS NOT NULL
         ), moved AS (
           SELECT b.*, t.type, t.chain AS booked_chain, t.payment_intent_id AS booked_intent,
                  (SELECT COALESCE(SUM(p.amount), 0) FROM ledger_postings p JOIN ledger_accounts a ON a.id = p.account_id
                    WHERE p.transaction_id = b.transaction_id AND p.currency = b.currency
                      AND a.kind IN ('treasury_available', 'treasury_native')) AS treasury_change,
                  (SELECT COUNT(*) FROM ledger_postings p WHERE p.transaction_id = b.transaction_id) AS postings
             FROM booked b LEFT JOIN ledger_transactions t ON t.id = b.transaction_id
         )
         SELECT id, chain, tx_id, transfer_index, role, amount::text, treasury_change::text FROM moved
          WHERE type IS NULL OR booked_chain <> chain OR postings <> 2
             OR (role = 'funding' AND (type <> 'funding' OR booked_intent IS NOT NULL OR treasury_change <> amount))
             OR (role = 'refund' AND (type <> 'refund' OR booked_intent IS DISTINCT FROM payment_intent_id OR treasury_change <> amount))
             OR (role = 'reversal' AND (type <> 'funding' OR booked_intent IS NOT NULL OR treasury_change <> -amount))
          ORDER BY id LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );
  add(
    'ledger_transaction_books_one_inbound_transfer',
    (
      await db.query(
        `SELECT transaction_id::text, COUNT(*)::int AS transfers FROM (
           SELECT funding_transaction_id AS transaction_id FROM inbound_transfers
           UNION ALL SELECT refund_transaction_id FROM inbound_transfers
           UNION ALL SELECT reversal_transaction_id FROM inbound_transfers) x
          WHERE transaction_id IS NOT NULL GROUP BY transaction_id HAVING COUNT(*) > 1 LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
      )
    ).rows,
  );
  add(
    'refund_is_one_inbound_transfer',
    (
      await db.query(
        `WITH refunds AS (
           SELECT t.id, t.payment_intent_id,
                  COUNT(*) OVER (PARTITION BY t.payment_intent_id) AS per_payment,
                  (SELECT SUM(p.amount) FROM ledger_postings p WHERE p.transaction_id = t.id AND p.amount > 0) AS amount
             FROM ledger_transactions t WHERE t.type = 'refund')
         SELECT r.id::text AS transaction_id, r.payment_intent_id FROM refunds r
           LEFT JOIN inbound_transfers i ON i.refund_transaction_id = r.id
           LEFT JOIN payment_intents pi ON pi.id = r.payment_intent_id
          WHERE i.id IS NULL OR r.per_payment > 1 OR pi.id IS NULL OR pi.status <> 'settled' OR r.amount > pi.amount_micros
          LIMIT ${LEDGER_VERIFY_PROBLEMS_MAX}`,
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
