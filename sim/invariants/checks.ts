// The invariants of issue 37 §3, each a named check over the database (and the simulated chains, whose network lives
// in the same database). A check answers null when it holds, or what it saw broken. Step checks are cheap (what the
// step added, or small tables) and run after every operation; full checks read whole tables and run every few steps
// and at the end; end checks run once the run has drained.
import { canTransition, OPEN_STATUSES, type PaymentStatus } from '../../src/domain/payment-intent.js';
import { verifyAudit } from '../../src/core/operators/audit-verify.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { reconcile } from '../../src/core/treasury/reconcile.js';
import type { World } from '../world.js';
import { constraintRefusals } from '../faults/db.js';

/** What the step checks remember between steps: how far they have read, and the sums so far. */
export interface Watermarks {
  transitionId: number;
  postingId: number;
  ledgerTransactionId: number;
  lastStatus: Map<string, PaymentStatus>;
  accountPostings: Map<string, bigint>;
}

export function createWatermarks(): Watermarks {
  return { transitionId: 0, postingId: 0, ledgerTransactionId: 0, lastStatus: new Map(), accountPostings: new Map() };
}

export interface Check {
  name: string;
  run(world: World, marks: Watermarks): Promise<string | null>;
}

/** After every step. */
export const STEP_CHECKS: Check[] = [
  {
    name: 'statuses_only_move_forward',
    async run(world, marks) {
      const { rows } = await world.pool.query<{ id: string; payment_intent_id: string; from_status: PaymentStatus | null; to_status: PaymentStatus }>(
        'SELECT id::int, payment_intent_id, from_status, to_status FROM payment_intent_transitions WHERE id > $1 ORDER BY id',
        [marks.transitionId],
      );
      for (const row of rows) {
        marks.transitionId = Math.max(marks.transitionId, Number(row.id));
        const last = marks.lastStatus.get(row.payment_intent_id);
        marks.lastStatus.set(row.payment_intent_id, row.to_status);
        if (row.from_status === null) {
          if (last !== undefined) return `payment ${row.payment_intent_id} started again at ${row.to_status} after ${last}`;
          continue;
        }
        if (last !== undefined && last !== row.from_status) return `payment ${row.payment_intent_id} moved from ${row.from_status} but was ${last}`;
        if (!canTransition(row.from_status, row.to_status)) return `payment ${row.payment_intent_id} moved ${row.from_status} -> ${row.to_status}`;
      }
      return null;
    },
  },
  {
    name: 'postings_balance_per_currency',
    async run(world, marks) {
      const { rows } = await world.pool.query<{ transaction_id: string; currency: string; sum: string }>(
        `SELECT transaction_id::text, currency, SUM(amount)::text AS sum FROM ledger_postings WHERE transaction_id > $1
          GROUP BY transaction_id, currency HAVING SUM(amount) <> 0 LIMIT 5`,
        [marks.ledgerTransactionId],
      );
      return rows.length === 0 ? null : JSON.stringify(rows);
    },
  },
  {
    name: 'payment_debited_at_most_once',
    async run(world, marks) {
      const { rows } = await world.pool.query<{ payment_intent_id: string; n: number }>(
        `SELECT payment_intent_id, COUNT(*)::int AS n FROM ledger_transactions
          WHERE type = 'debit' AND payment_intent_id IN (SELECT payment_intent_id FROM ledger_transactions WHERE id > $1 AND type = 'debit')
          GROUP BY payment_intent_id HAVING COUNT(*) > 1 LIMIT 5`,
        [marks.ledgerTransactionId],
      );
      const max = await world.pool.query<{ id: string | null }>('SELECT MAX(id)::text AS id FROM ledger_transactions');
      marks.ledgerTransactionId = Number(max.rows[0]?.id ?? 0);
      return rows.length === 0 ? null : JSON.stringify(rows);
    },
  },
  {
    name: 'balance_equals_its_postings',
    async run(world, marks) {
      const added = await world.pool.query<{ account_id: string; sum: string; last: string }>(
        'SELECT account_id::text, SUM(amount)::text AS sum, MAX(id)::text AS last FROM ledger_postings WHERE id > $1 GROUP BY account_id',
        [marks.postingId],
      );
      for (const row of added.rows) {
        marks.accountPostings.set(row.account_id, (marks.accountPostings.get(row.account_id) ?? 0n) + BigInt(row.sum));
        marks.postingId = Math.max(marks.postingId, Number(row.last));
      }
      const { rows } = await world.pool.query<{ id: string; balance: string }>('SELECT id::text, balance::text FROM ledger_accounts');
      for (const account of rows) {
        const sum = marks.accountPostings.get(account.id) ?? 0n;
        if (BigInt(account.balance) === sum) continue;
        // The running sum reads postings by id, and a transaction may commit after a later id did: ask the database
        // for the whole sum before calling the balance wrong.
        const whole = await world.pool.query<{ sum: string }>('SELECT COALESCE(SUM(amount), 0)::text AS sum FROM ledger_postings WHERE account_id = $1', [account.id]);
        const actual = BigInt(whole.rows[0]!.sum);
        marks.accountPostings.set(account.id, actual);
        if (BigInt(account.balance) !== actual) return `account ${account.id} holds ${account.balance}, its postings sum to ${actual}`;
      }
      return null;
    },
  },
  {
    name: 'available_never_negative',
    async run(world) {
      const { rows } = await world.pool.query<{ chain: string; currency: string; kind: string; balance: string }>(
        // Accounts are striped (several rows per kind, src/ledger/store.ts): a stripe may dip, the kind may not.
        `SELECT chain, currency, kind, SUM(balance)::text AS balance FROM ledger_accounts
          WHERE kind IN ('treasury_available', 'treasury_reserved', 'treasury_in_flight')
          GROUP BY chain, currency, kind HAVING SUM(balance) < 0`,
      );
      const bad = rows;
      return bad.length === 0 ? null : JSON.stringify(bad);
    },
  },
  {
    name: 'reserved_plus_in_flight_equals_open_payments',
    async run(world) {
      const { rows } = await world.pool.query<{ chain: string; held: string; open: string }>(
        `WITH held AS (
           SELECT chain, SUM(balance) AS held FROM ledger_accounts
            WHERE currency = 'USDC' AND kind IN ('treasury_reserved', 'treasury_in_flight') GROUP BY chain
         ), open AS (
           SELECT selected_chain AS chain, SUM(amount_micros) AS open FROM payment_intents WHERE status = ANY($1::text[]) GROUP BY selected_chain
         )
         SELECT COALESCE(h.chain, o.chain) AS chain, COALESCE(h.held, 0)::text AS held, COALESCE(o.open, 0)::text AS open
           FROM held h FULL JOIN open o ON o.chain = h.chain`,
        [OPEN_STATUSES],
      );
      const bad = rows.filter((r) => r.held !== r.open);
      return bad.length === 0 ? null : JSON.stringify(bad);
    },
  },
];

/**
 * Issue 37 (decision 215): no statement of the service is refused by an integrity constraint of the database (SQLSTATE
 * class 23). The constraints are the last line of defence; reaching one means the service's own logic asked for what
 * it must never do (two attempts at one place of an on-chain batch, a second refund of one payment), and the work it
 * was doing was lost with its transaction (a batch left unsigned, a deposit scan rolled back). The faults never make
 * one. Appended to the step checks (cheap: what the processes' pools recorded).
 */
STEP_CHECKS.push({
  name: 'service_keeps_its_constraints',
  async run(world) {
    const refused = [...constraintRefusals(world.ctx.pool), ...constraintRefusals(world.second.pool)];
    return refused.length === 0 ? null : `refused by the database: ${JSON.stringify(refused.slice(0, 3))}`;
  },
});

/** Every few steps and at the end: whole tables. */
export const FULL_CHECKS: Check[] = [
  {
    name: 'one_landed_transfer_per_payment',
    async run(world) {
      if (world.chains) {
        const seen = new Map<string, string>();
        for (const landed of world.chains.landedTransfers()) {
          const earlier = seen.get(landed.paymentId);
          if (earlier !== undefined && earlier !== landed.txId) return `payment ${landed.paymentId} landed in ${earlier} and ${landed.txId}`;
          seen.set(landed.paymentId, landed.txId);
        }
        return null;
      }
      const { rows } = await world.pool.query<{ ref: string; txs: string[] }>(
        `SELECT ref, array_agg(DISTINCT tx_id) AS txs FROM sim_payouts WHERE NOT will_stick GROUP BY ref HAVING COUNT(DISTINCT tx_id) > 1 LIMIT 5`,
      );
      return rows.length === 0 ? null : JSON.stringify(rows);
    },
  },
  {
    name: 'one_signed_transaction_per_nonce',
    async run(world) {
      if (world.chains) {
        const byNonce = new Map<string, Set<string>>();
        for (const record of world.chains.signedTransactions()) {
          if (record.nonce === null || record.purpose === 'cancel') continue;
          const key = `${record.chain}:${record.treasury}:${record.nonce}`;
          const payments = byNonce.get(key) ?? new Set<string>();
          payments.add([...record.paymentIds].sort().join(','));
          byNonce.set(key, payments);
          if (payments.size > 1) return `${key} signed for ${[...payments].join(' and ')}`;
        }
        return null;
      }
      const { rows } = await world.pool.query<{ chain: string; nonce: string; tx_id: string; payments: string[] }>(
        `SELECT chain, chain_meta->>'nonce' AS nonce, tx_id, array_agg(payment_intent_id ORDER BY payment_intent_id) AS payments
           FROM payment_attempts WHERE chain_meta ? 'nonce' AND chain_meta->>'nonce' IS NOT NULL
          GROUP BY chain, chain_meta->>'nonce', tx_id`,
      );
      const byNonce = new Map<string, Set<string>>();
      for (const row of rows) {
        const key = `${row.chain}:${row.nonce}`;
        const payments = byNonce.get(key) ?? new Set<string>();
        payments.add(row.payments.join(','));
        byNonce.set(key, payments);
        // Two transactions on one nonce may exist only as replacements of the same payments.
        if (payments.size > 1) return `${key} signed for ${[...payments].join(' and ')}`;
      }
      return null;
    },
  },
  {
    name: 'no_solana_resign_while_earlier_can_land',
    async run(world) {
      if (world.chains) {
        // A payment's earlier Solana transaction must be past its last valid height, or reverted for good, before
        // another transaction for it is first sent.
        const earlier = new Map<string, { txId: string; lastValidHeight: number | null; revertedFinalAt: number | null }[]>();
        for (const record of world.chains.signedTransactions()) {
          if (record.chain !== 'solana') continue;
          for (const id of record.paymentIds) {
            for (const before of earlier.get(id) ?? []) {
              const dead = (before.lastValidHeight !== null && record.seenAtHeight > before.lastValidHeight) || (before.revertedFinalAt !== null && record.seenAtHeight >= before.revertedFinalAt);
              if (!dead) return `payment ${id}: ${record.txId} sent at height ${record.seenAtHeight} while ${before.txId} (valid to ${before.lastValidHeight}) could land`;
            }
            earlier.set(id, [...(earlier.get(id) ?? []), record]);
          }
        }
        return null;
      }
      const { rows } = await world.pool.query<{ payment_intent_id: string; tx_id: string; status: string }>(
        `SELECT a.payment_intent_id, a.tx_id, a.status FROM payment_attempts a
          WHERE a.chain = 'solana' AND a.status IN ('signed', 'broadcasted', 'confirmed')
            AND EXISTS (SELECT 1 FROM payment_attempts b WHERE b.payment_intent_id = a.payment_intent_id AND b.tx_id <> a.tx_id
                         AND b.created_at > a.created_at AND b.chain = 'solana')
          LIMIT 5`,
      );
      return rows.length === 0 ? null : JSON.stringify(rows);
    },
  },
  {
    // Nothing is signed for a payout that waited for approval (or is above the threshold) unless it was approved.
    name: 'payouts_keep_their_approval',
    async run(world) {
      const threshold = world.config.policy.approvalAboveMicros;
      const { rows } = await world.pool.query<{ id: string; approval: string | null }>(
        `SELECT DISTINCT pi.id, ap.status AS approval FROM payment_attempts a JOIN payment_intents pi ON pi.id = a.payment_intent_id
           LEFT JOIN payment_approvals ap ON ap.payment_intent_id = pi.id
          WHERE pi.kind = 'payout' AND (ap.payment_intent_id IS NOT NULL OR ($1::bigint IS NOT NULL AND pi.amount_micros > $1::bigint))
            AND ap.status IS DISTINCT FROM 'approved' LIMIT 5`,
        [threshold?.toString() ?? null],
      );
      return rows.length === 0 ? null : `signed without approval: ${JSON.stringify(rows)}`;
    },
  },
  {
    // The hold is decided exactly (decisions 9, 179), recomputed here from the database's facts: a payout not in a batch
    // held whole waits for approval exactly when it is above its merchant's threshold, or when, with a limit per day,
    // what left without approval in the 24 hours before it (payouts with no approval row, not failed, cancelled or
    // expired when it was created) plus itself is above that limit. Some amounts are exactly 2,000 USD.
    name: 'held_for_approval_iff_above_threshold',
    async run(world) {
      const limit = (set: boolean | null, micros: string | null, fallback: bigint | null) => (set ? (micros === null ? null : BigInt(micros)) : fallback);
      const policies = await world.pool.query<{ id: string; a_set: boolean | null; a: string | null; d_set: boolean | null; d: string | null }>(
        `SELECT m.id, p.approval_above_set AS a_set, p.approval_above_micros::text AS a, p.approval_above_per_day_set AS d_set,
                p.approval_above_per_day_micros::text AS d FROM merchants m LEFT JOIN merchant_policies p ON p.merchant_id = m.id`,
      );
      const policyOf = new Map(
        policies.rows.map((r) => [r.id, { above: limit(r.a_set, r.a, world.config.policy.approvalAboveMicros), perDay: limit(r.d_set, r.d, world.config.policy.approvalAbovePerDayMicros) }]),
      );
      const payouts = await world.pool.query<{ id: string; merchant_id: string; amount: string; created_at: Date; held: boolean; held_whole: boolean; in_batch: boolean }>(
        `SELECT pi.id, pi.merchant_id, pi.amount_micros::text AS amount, pi.created_at, ap.payment_intent_id IS NOT NULL AS held,
                ap.payout_batch_id IS NOT NULL AS held_whole, EXISTS (SELECT 1 FROM payout_batch_items b WHERE b.payment_intent_id = pi.id) AS in_batch
           FROM payment_intents pi LEFT JOIN payment_approvals ap ON ap.payment_intent_id = pi.id WHERE pi.kind = 'payout'`,
      );
      const perDayMerchants = new Set([...policyOf].filter(([, p]) => p.perDay !== null).map(([id]) => id));
      // Each payout's moves in order, and where its first one stands among all moves: the moment it was created.
      const moves = new Map<string, { id: number; to: string }[]>();
      if (perDayMerchants.size > 0) {
        const { rows } = await world.pool.query<{ id: number; payment_intent_id: string; to_status: string }>(
          `SELECT t.id::int, t.payment_intent_id, t.to_status FROM payment_intent_transitions t JOIN payment_intents pi ON pi.id = t.payment_intent_id
            WHERE pi.merchant_id = ANY($1::text[]) ORDER BY t.id`,
          [[...perDayMerchants]],
        );
        for (const r of rows) moves.set(r.payment_intent_id, [...(moves.get(r.payment_intent_id) ?? []), { id: r.id, to: r.to_status }]);
      }
      const released = new Set(['failed', 'cancelled', 'expired']);
      const DAY_MS = 24 * 60 * 60 * 1000;
      const bad: unknown[] = [];
      for (const q of payouts.rows) {
        if (q.held_whole) continue;
        const policy = policyOf.get(q.merchant_id);
        if (!policy) continue;
        const amount = BigInt(q.amount);
        let expected = policy.above !== null && amount > policy.above;
        if (!expected && policy.perDay !== null) {
          // Items of one batch count each other in the service (as the batch is reserved); the splitter sends none.
          if (q.in_batch) continue;
          const createdAt = moves.get(q.id)?.[0]?.id;
          if (createdAt === undefined) continue;
          let before = 0n;
          for (const p of payouts.rows) {
            if (p.id === q.id || p.merchant_id !== q.merchant_id || p.held) continue;
            if (p.created_at.getTime() <= q.created_at.getTime() - DAY_MS) continue;
            const earlier = (moves.get(p.id) ?? []).filter((m) => m.id < createdAt);
            if (earlier.length === 0 || released.has(earlier.at(-1)!.to)) continue;
            before += BigInt(p.amount);
          }
          expected = before + amount > policy.perDay;
        }
        if (expected !== q.held) bad.push({ id: q.id, merchant: q.merchant_id, amount: q.amount, held: q.held, expected });
      }
      return bad.length === 0 ? null : `hold not decided by the thresholds: ${JSON.stringify(bad.slice(0, 5))}`;
    },
  },
  {
    name: 'payment_refunded_at_most_its_amount',
    async run(world) {
      const { rows } = await world.pool.query<{ id: string; refunds: number; refunded: string; amount: string }>(
        `SELECT pi.id, COUNT(DISTINCT t.id)::int AS refunds, SUM(p.amount)::text AS refunded, pi.amount_micros::text AS amount
           FROM ledger_transactions t JOIN payment_intents pi ON pi.id = t.payment_intent_id
           JOIN ledger_postings p ON p.transaction_id = t.id AND p.amount > 0 AND p.currency = 'USDC'
          WHERE t.type = 'refund' GROUP BY pi.id HAVING COUNT(DISTINCT t.id) > 1 OR SUM(p.amount) > pi.amount_micros LIMIT 5`,
      );
      return rows.length === 0 ? null : JSON.stringify(rows);
    },
  },
  {
    name: 'payouts_keep_their_screening_verdict',
    async run(world) {
      if (world.screening.sanctioned.size === 0) return null;
      const { rows } = await world.pool.query<{ id: string; address: string; signed_at: Date }>(
        `SELECT pi.id, pi.destination_address AS address, a.created_at AS signed_at FROM payment_attempts a
           JOIN payment_intents pi ON pi.id = a.payment_intent_id WHERE pi.destination_address = ANY($1::text[])`,
        [[...world.screening.sanctioned.keys()]],
      );
      const bad = rows.filter((r) => r.signed_at.getTime() > world.screening.sanctioned.get(r.address)!);
      return bad.length === 0 ? null : `signed to a sanctioned recipient: ${JSON.stringify(bad.slice(0, 5))}`;
    },
  },
  {
    name: 'audit_chain_verifies',
    async run(world) {
      const proof = await verifyAudit({ pool: world.pool, config: world.config });
      return proof.ok ? null : JSON.stringify(proof);
    },
  },
];

/**
 * Issue 37: with SCREENING_FAIL=closed, nothing is signed to a recipient the provider did not clear. Decided from the
 * provider's side (sim/outside/screening.ts records every question, its simulated time and whether it was answered):
 * an attempt signed at a moment when every question about its recipient went unanswered was signed without a
 * verdict. The service screens right before signing, at the same simulated moment (only the simulator moves the
 * clock), so a moment with an answered question is left alone: another process may have been cleared then.
 */
FULL_CHECKS.push({
  name: 'nothing_signed_without_screening_clearance',
  async run(world) {
    const silent = new Map<string, boolean>();
    for (const q of world.screening.asked) {
      const key = `${q.address}@${q.atMs}`;
      silent.set(key, (silent.get(key) ?? true) && !q.answered);
    }
    if (![...silent.values()].some(Boolean)) return null;
    const { rows } = await world.pool.query<{ id: string; address: string; signed_at: Date; tx_id: string }>(
      `SELECT pi.id, pi.destination_address AS address, a.created_at AS signed_at, a.tx_id FROM payment_attempts a
         JOIN payment_intents pi ON pi.id = a.payment_intent_id WHERE a.purpose = 'transfer'`,
    );
    const bad = rows.filter((r) => silent.get(`${r.address}@${r.signed_at.getTime()}`) === true);
    return bad.length === 0 ? null : `signed while the screening provider gave no answer: ${JSON.stringify(bad.slice(0, 5))}`;
  },
});

/**
 * Issue 37: funds are released only for a payment nothing can pay out. A payment failed, cancelled or expired (its
 * reservation released) has no transfer final on the simulated chains: one would have paid it while its funds went
 * back to the treasury. Sees an unknown verdict taken for "cannot land" (an operator's cancel, an abandoned execution)
 * before the end's reconcile does.
 */
FULL_CHECKS.push({
  name: 'no_landed_transfer_for_released_payment',
  async run(world) {
    if (!world.chains) return null;
    const landed = world.chains.landedTransfers().filter((t) => t.state === 'final');
    if (landed.length === 0) return null;
    const { rows } = await world.pool.query<{ id: string; status: string }>(
      "SELECT id, status FROM payment_intents WHERE id = ANY($1::text[]) AND status IN ('failed', 'cancelled', 'expired')",
      [[...new Set(landed.map((t) => t.paymentId))]],
    );
    if (rows.length === 0) return null;
    const status = new Map(rows.map((r) => [r.id, r.status]));
    const bad = landed.filter((t) => status.has(t.paymentId)).map((t) => ({ payment: t.paymentId, status: status.get(t.paymentId), chain: t.chain, tx: t.txId }));
    return `paid on chain after its funds were released: ${JSON.stringify(bad.slice(0, 5))}`;
  },
});

/** Once the run has drained (no faults, every payment final). */
export const END_CHECKS: Check[] = [
  // The service's own proof of the books (src/ledger/verify.ts): whole-table joins on one deferrable snapshot, too
  // slow for every few steps; the step checks above cover its balances as they go.
  {
    name: 'ledger_verifies',
    async run(world) {
      const report = await verifyLedger(world.pool);
      return report.ok ? null : JSON.stringify(report.problems.slice(0, 5));
    },
  },
  {
    name: 'every_payment_final',
    async run(world) {
      const { rows } = await world.pool.query<{ id: string; status: string }>('SELECT id, status FROM payment_intents WHERE status = ANY($1::text[]) LIMIT 5', [OPEN_STATUSES]);
      return rows.length === 0 ? null : JSON.stringify(rows);
    },
  },
  {
    name: 'reconcile_clean',
    async run(world) {
      const results = await reconcile(world.pool, world.adapters);
      const bad = results.filter((r) => r.status !== 'ok');
      if (bad.length > 0) return JSON.stringify(bad);
      // Native too: the fees the books charged each treasury are the fees its chain charged (reconcile() compares USDC).
      const { rows } = await world.pool.query<{ chain: string; balance: string }>(
        "SELECT chain, SUM(balance)::text AS balance FROM ledger_accounts WHERE kind = 'treasury_native' GROUP BY chain",
      );
      for (const row of rows) {
        const adapter = world.adapters[row.chain as keyof typeof world.adapters];
        if (!adapter) continue;
        const onChain = await adapter.treasuryNativeBalance();
        if (onChain !== BigInt(row.balance)) return `${row.chain}: books hold ${row.balance} native units, the chain ${onChain}`;
      }
      return null;
    },
  },
  {
    name: 'every_status_change_webhook_delivered',
    async run(world) {
      const undelivered = await world.pool.query<{ id: string; event_type: string; status: string }>(
        "SELECT id, event_type, status FROM webhook_events WHERE status <> 'delivered' LIMIT 5",
      );
      if (undelivered.rows.length > 0) return `not delivered: ${JSON.stringify(undelivered.rows)}`;
      // Delivered as the receiver saw it (a 2xx it sent), not as the outbox says.
      const outbox = await world.pool.query<{ id: string; event_type: string }>("SELECT id, event_type FROM webhook_events WHERE status = 'delivered'");
      const unseen = outbox.rows.filter((r) => !world.receiver.delivered.has(r.id));
      if (unseen.length > 0) return `marked delivered, never answered 2xx: ${JSON.stringify(unseen.slice(0, 5))}`;
      const { rows } = await world.pool.query<{ id: string; status: string }>(
        `SELECT pi.id, t.to_status AS status FROM payment_intent_transitions t JOIN payment_intents pi ON pi.id = t.payment_intent_id
          WHERE pi.kind = 'payout' AND t.to_status IN ('settled', 'failed', 'manual_review')
            AND NOT EXISTS (SELECT 1 FROM webhook_events e WHERE e.payment_intent_id = pi.id AND e.event_type = 'payment.' || t.to_status AND e.status = 'delivered')
          LIMIT 5`,
      );
      return rows.length === 0 ? null : `no delivered event: ${JSON.stringify(rows)}`;
    },
  },
];
