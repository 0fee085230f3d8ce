// Striped ledger accounts (decision 18) against real PostgreSQL: two payments' postings land on different rows, so
// one transaction holding its stripe does not hold up another payment's; `treasury_available` stays one row, so
// reservations still queue on it; an account is checked on its total over every stripe, and `ledger verify` proves
// each stripe from its own postings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTransaction } from '../../src/db/pool.js';
import { movements } from '../../src/ledger/movements.js';
import { LedgerInvariantError, postMany, stripeOf } from '../../src/ledger/store.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const AT = new Date('2026-03-01T12:00:00Z');
let db: TestDatabase;

/** Two payment ids whose postings go to different stripes, and a third that shares the first one's. */
function ids(): { a: string; b: string; sameAsA: string } {
  const a = 'pi_stripe_a';
  let b = 'pi_stripe_b';
  for (let i = 0; stripeOf(b) === stripeOf(a); i++) b = `pi_stripe_b${i}`;
  let sameAsA = 'pi_stripe_c';
  for (let i = 0; stripeOf(sameAsA) !== stripeOf(a); i++) sameAsA = `pi_stripe_c${i}`;
  return { a, b, sameAsA };
}

beforeAll(async () => {
  db = await createTestDatabase();
  await withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.fundUsdc('solana', 100_000_000n, 'USDC'), context: { at: AT } }]));
  // Reserved funds for the debits below to move.
  await withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.reserve('solana', 10_000_000n, 'USDC'), context: { paymentIntentId: 'pi_setup', at: AT } }]));
});
afterAll(async () => db.drop());

/** Runs `second` while `first` has posted and not yet committed; `second` gives up after `waitMs` on a lock. */
async function whileHeld(first: string, second: string, waitMs: number): Promise<'done' | 'blocked'> {
  const holder = await db.pool.connect();
  try {
    await holder.query('BEGIN');
    await postMany(holder, [{ movement: movements.reserve('solana', 1_000_000n, 'USDC'), context: { paymentIntentId: first, at: AT } }]);
    // Only the striped accounts: the reserve above also holds treasury_available, which every reservation needs.
    return await withTransaction(db.pool, async (tx) => {
      await tx.query(`SET LOCAL lock_timeout = '${waitMs}ms'`);
      await postMany(tx, [{ movement: movements.debit('solana', 1n, 'USDC'), context: { paymentIntentId: second, at: AT } }]);
      throw Object.assign(new Error('roll back'), { done: true });
    }).catch((error: { code?: string; done?: boolean }) => {
      if (error.done) return 'done' as const;
      if (error.code === '55P03') return 'blocked' as const; // lock_not_available
      throw error;
    });
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }
}

describe('striped ledger accounts', () => {
  it("one payment's uncommitted posting does not hold up another payment's, unless they share a stripe", async () => {
    const { a, b, sameAsA } = ids();
    // A few seconds is no deadline on the answer: "done" comes at once, and only a lock wait could ever reach it.
    expect(await whileHeld(a, b, 5_000)).toBe('done');
    expect(await whileHeld(a, sameAsA, 200)).toBe('blocked');
  });

  it('treasury_available stays one row that every reservation locks', async () => {
    const { a, b } = ids();
    const holder = await db.pool.connect();
    try {
      await holder.query('BEGIN');
      await postMany(holder, [{ movement: movements.reserve('solana', 1_000_000n, 'USDC'), context: { paymentIntentId: a, at: AT } }]);
      const second = withTransaction(db.pool, async (tx) => {
        await tx.query(`SET LOCAL lock_timeout = '200ms'`);
        await postMany(tx, [{ movement: movements.reserve('solana', 1_000_000n, 'USDC'), context: { paymentIntentId: b, at: AT } }]);
      });
      await expect(second).rejects.toMatchObject({ code: '55P03' });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const { rows } = await db.pool.query("SELECT stripe FROM ledger_accounts WHERE kind = 'treasury_available'");
    expect(rows).toEqual([{ stripe: 0 }]);
  });

  it('checks an account on its total over every stripe, and verify proves each stripe', async () => {
    const { a, b } = ids();
    await withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.reserve('solana', 5_000_000n, 'USDC'), context: { paymentIntentId: a, at: AT } }]));
    // Released from another stripe: that row goes negative, the account's total does not.
    await withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.release('solana', 3_000_000n, 'treasury_reserved', 'USDC'), context: { paymentIntentId: b, at: AT } }]));
    const { rows } = await db.pool.query<{ stripe: number; balance: string }>(
      "SELECT stripe, balance::text FROM ledger_accounts WHERE chain = 'solana' AND kind = 'treasury_reserved' AND stripe IN ($1, $2) ORDER BY stripe",
      [stripeOf(a), stripeOf(b)],
    );
    expect(rows).toEqual([
      { stripe: Math.min(stripeOf(a), stripeOf(b)), balance: stripeOf(a) < stripeOf(b) ? '5000000' : '-3000000' },
      { stripe: Math.max(stripeOf(a), stripeOf(b)), balance: stripeOf(a) < stripeOf(b) ? '-3000000' : '5000000' },
    ]);
    const total = await db.pool.query("SELECT SUM(balance)::text AS n FROM ledger_accounts WHERE chain = 'solana' AND kind = 'treasury_reserved'");
    expect(total.rows[0].n).toBe('12000000');
    expect((await verifyLedger(db.pool)).problems).toEqual([]);

    // More than the account holds in total is refused, from whichever stripe.
    const overdrawn = withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.release('solana', 12_000_001n, 'treasury_reserved', 'USDC'), context: { paymentIntentId: b, at: AT } }]));
    await expect(overdrawn).rejects.toBeInstanceOf(LedgerInvariantError);
    await withTransaction(db.pool, (tx) => postMany(tx, [{ movement: movements.release('solana', 12_000_000n, 'treasury_reserved', 'USDC'), context: { paymentIntentId: a, at: AT } }]));
    expect((await verifyLedger(db.pool)).problems).toEqual([]);
  });
});
