// Nonce allocation in PostgreSQL (decisions 31, 32): concurrent allocations never collide, the chain's pending count
// decides where the sequence stands (so a reset chain heals), our live attempts and refused ones that their own
// retry may re-sign keep their nonces, a gap left by a transfer refused for good (its payment finished or waiting in
// manual review) is filled first, and the allocation reads only the attempts at the frontier, through an index.
import { beforeAll, afterAll, beforeEach, describe, expect, it } from 'vitest';
import { claimNonce } from '../../src/db/queries/nonces.js';
import { withTransaction, type Queryable } from '../../src/db/pool.js';
import { createTestDatabase, seedMerchantAndQuote, type TestDatabase } from '../helpers/db.js';

const TREASURY = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
let db: TestDatabase;
let sequence = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  await seedMerchantAndQuote(db, { merchantId: 'mer_n', quoteId: 'quo_n', chain: 'ethereum' });
});
afterAll(async () => db.drop());
beforeEach(async () => {
  await db.pool.query('DELETE FROM payment_attempts');
  await db.pool.query('DELETE FROM chain_nonces');
});

/** A payment intent in `status`; returns its id. */
async function intent(status: string): Promise<string> {
  const id = `pi_n${++sequence}`;
  await db.pool.query(
    `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain, destination_address, created_at, updated_at)
     VALUES ($1, 'mer_n', 'quo_n', $1, 1, $2, 'ethereum', '0x0', now(), now())`,
    [id, status],
  );
  return id;
}

/** An attempt on `nonce`; `batch`: the tx id and place of an on-chain batch it shares with others. */
async function attempt(intentId: string, nonce: number, status: string, reason: string | null = null, batch?: { txId: string; payments: number; index: number }) {
  const id = `att_n${++sequence}`;
  await db.pool.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd, failure_reason, created_at,
       tx_payments, tx_payment_index)
     VALUES ($1, $2, 'ethereum', $6, $3, '0x', $4, 0, $5, now(), $7, $8)`,
    [id, intentId, status, { nonce }, reason, batch?.txId ?? id, batch?.payments ?? 1, batch?.index ?? 0],
  );
}

/** An allocation for a payout (`forIntent`: the intent being signed; a fresh one by default). */
const allocate = (pendingCount: number, forIntent = 'pi_other') =>
  withTransaction(db.pool, (tx) => claimNonce(tx, 'ethereum', TREASURY, pendingCount, forIntent));

describe('ethereum nonce allocation', () => {
  it('10 concurrent allocations, each stored with its attempt, get 10 consecutive nonces from the pending count', async () => {
    const owner = await intent('broadcasting');
    const nonces = await Promise.all(
      Array.from({ length: 10 }, () =>
        withTransaction(db.pool, async (tx) => {
          const nonce = await claimNonce(tx, 'ethereum', TREASURY, 3, 'pi_other');
          await tx.query(
            `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd, created_at)
             VALUES ($1, $2, 'ethereum', $1, 'signed', '0x', $3, 0, now())`,
            [`att_c${nonce}`, owner, { nonce }],
          );
          return nonce;
        }),
      ),
    );
    expect([...nonces].sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('follows a chain that was reset under the same database: the pending count wins over the stored counter', async () => {
    const settled = await intent('settled');
    for (let nonce = 0; nonce < 5; nonce++) await attempt(settled, nonce, 'confirmed');
    await db.pool.query(`INSERT INTO chain_nonces (chain, address, next_nonce) VALUES ('ethereum', $1, 5)`, [TREASURY.toLowerCase()]);
    // The fresh chain expects nonce 0; nonce 5 would never be mined and every later payout would queue behind it.
    expect(await allocate(0)).toBe(0);
  });

  it('steps past nonces our live transfers hold, even those the node does not have', async () => {
    const live = await intent('broadcasted');
    await attempt(live, 5, 'broadcasted');
    expect(await allocate(3)).toBe(6);
    await attempt(await intent('broadcasting'), 6, 'signed');
    expect(await allocate(3)).toBe(7);
    // Mined ones are below the pending count and change nothing.
    expect(await allocate(9)).toBe(9);
  });

  it("never hands out a refused nonce while its own intent's retry may re-sign on it", async () => {
    // X was refused (insufficient_gas) on nonce 0 and waits for its retry, which re-signs on nonce 0 with a higher fee.
    const x = await intent('retrying');
    await attempt(x, 0, 'failed', 'insufficient_gas');
    const y = await allocate(0);
    expect(y).toBe(1);
    await attempt(await intent('broadcasting'), y, 'signed');
    // Once X's intent is finished, nothing will re-sign on 0: the gap below Y is filled first.
    await db.pool.query("UPDATE payment_intents SET status = 'failed' WHERE id = $1", [x]);
    expect(await allocate(0)).toBe(0);
  });

  it("a refused batch's nonce goes back to whichever of its payments is signed again first; the others take the next", async () => {
    // One transaction paid X and Y (an on-chain batch) on nonce 0 and was refused; both wait for their retries.
    const x = await intent('retrying');
    const y = await intent('retrying');
    await attempt(x, 0, 'failed', 'insufficient_gas', { txId: 'tx_batch', payments: 2, index: 0 });
    await attempt(y, 0, 'failed', 'insufficient_gas', { txId: 'tx_batch', payments: 2, index: 1 });
    // Y's refusal is not another payment's that will re-sign on 0: X takes 0 back, and no gap is left below.
    expect(await allocate(0, x)).toBe(0);
    await attempt(x, 0, 'signed');
    expect(await allocate(0, y)).toBe(1);
    // A payout outside the batch still waits for the batch's payments to take their nonce back.
    const z = await intent('retrying');
    await attempt(z, 5, 'failed', 'insufficient_gas', { txId: 'tx_other', payments: 2, index: 0 });
    await attempt(await intent('retrying'), 5, 'failed', 'insufficient_gas', { txId: 'tx_other', payments: 2, index: 1 });
    expect(await allocate(5)).toBe(6);
  });

  it('a nonce refused for good under a payment waiting in manual review goes to the next payout: no gap stalls it', async () => {
    const x = await intent('manual_review');
    await attempt(x, 0, 'failed', 'insufficient_gas');
    expect(await allocate(0)).toBe(0);
    // A transfer of a manual_review payment that may still land keeps its nonce (only a cancel on chain frees it).
    const stuck = await intent('manual_review');
    await attempt(stuck, 1, 'broadcasted');
    await attempt(await intent('broadcasting'), 0, 'signed');
    expect(await allocate(0)).toBe(2);
  });

  it("the intent's own retry re-signs on its refused nonce while it is free, and on a fresh one once another payout took it", async () => {
    const x = await intent('broadcasting');
    await attempt(x, 0, 'failed', 'insufficient_gas');
    await attempt(await intent('broadcasted'), 1, 'broadcasted');
    expect(await allocate(0, x)).toBe(0);
    // An operator retried x from manual review after another payout was given its nonce.
    await attempt(await intent('broadcasted'), 0, 'signed');
    expect(await allocate(0, x)).toBe(2);
  });

  it('after a nonce conflict the retry takes a fresh nonce, so the refused one is not held for it', async () => {
    const x = await intent('retrying');
    await attempt(x, 4, 'failed', 'nonce_conflict');
    expect(await allocate(4)).toBe(4);
  });

  it('never reuses the nonce of a transfer an operator failed from manual review: it may still be in a mempool', async () => {
    const x = await intent('failed');
    await attempt(x, 0, 'failed', 'operator_failed');
    await attempt(await intent('broadcasted'), 1, 'broadcasted');
    expect(await allocate(0)).toBe(2);
  });

  it('reuses nonces refused for good, lowest first and once, whatever finished the intent', async () => {
    for (const [nonce, status] of [
      [6, 'failed'],
      [8, 'cancelled'],
      [9, 'settled'], // refused once, then paid on another nonce after a nonce conflict
    ] as const) {
      await attempt(await intent(status), nonce, 'failed', 'insufficient_gas');
    }
    await attempt(await intent('broadcasted'), 10, 'broadcasted');
    for (const expected of [6, 8, 9, 11]) {
      const nonce = await allocate(6);
      expect(nonce).toBe(expected);
      await attempt(await intent('broadcasting'), nonce, 'signed');
    }
  });

  it('never reuses a nonce taken by another transaction, shared with a fee-bump replacement, or the node has', async () => {
    const done = await intent('failed');
    await attempt(done, 14, 'failed', 'nonce_conflict');
    await attempt(done, 15, 'failed', 'rpc_error');
    await attempt(done, 15, 'replaced', 'stuck');
    await attempt(done, 17, 'failed', 'insufficient_gas');
    await attempt(await intent('broadcasted'), 20, 'broadcasted');
    // 14 went to another transaction and 15 lives on in its replacement: 16 has no attempt, 17 is the lowest free one.
    expect(await allocate(14)).toBe(17);
    // Below the pending count the node has a transaction for every nonce: nothing there is reused.
    expect(await allocate(18)).toBe(21);
  });

  it('with 200k attempts in history, the allocation reads them through an index, never a sequential scan', async () => {
    const settled = await intent('settled');
    await db.pool.query(
      `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd, created_at)
       SELECT 'att_h' || n, $1, 'ethereum', 'tx_h' || n, 'confirmed', '0x', jsonb_build_object('nonce', n), 0, now()
         FROM generate_series(0, 199999) AS n`,
      [settled],
    );
    await db.pool.query(
      `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd, created_at)
       SELECT 'att_s' || n, $1, 'solana', 'sig_s' || n, 'confirmed', '0x', '{}', 0, now() FROM generate_series(0, 19999) AS n`,
      [settled],
    );
    await db.pool.query('ANALYZE payment_attempts');
    // Every SELECT the allocation runs is explained with its own parameters, then run.
    const plans: unknown[] = [];
    const nonce = await withTransaction(db.pool, (tx) => {
      const explaining = {
        query: async (sql: string, params?: unknown[]) => {
          if (/^\s*(WITH|SELECT)\b/i.test(sql)) plans.push((await tx.query(`EXPLAIN (FORMAT JSON) ${sql}`, params)).rows[0]['QUERY PLAN']);
          return tx.query(sql, params);
        },
      } as Queryable;
      return claimNonce(explaining, 'ethereum', TREASURY, 200_000, 'pi_other');
    });
    expect(nonce).toBe(200_000);
    expect(plans.length).toBeGreaterThan(0);
    const scans: string[] = [];
    const walk = (node: Record<string, unknown>) => {
      if (node['Relation Name'] === 'payment_attempts') scans.push(String(node['Node Type']));
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    for (const plan of plans as { Plan: Record<string, unknown> }[][]) walk(plan[0]!.Plan);
    expect(scans.length).toBeGreaterThan(0);
    expect(scans).not.toContain('Seq Scan');
  }, 60_000);
});
