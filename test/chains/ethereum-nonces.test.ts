// Nonce allocation in PostgreSQL: concurrent allocations never collide, and a nonce whose transaction the node
// refused is reused before the counter advances, so no gap blocks later payouts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allocateNonce } from '../../src/chains/ethereum/nonces.js';
import { withTransaction } from '../../src/db/pool.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const TREASURY = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query("INSERT INTO merchants (id, name, created_at) VALUES ('mer_n', 'n', now())");
  await db.pool.query(
    `INSERT INTO quotes (id, merchant_id, amount_micros, priority, destinations, candidate_routes, recommended_route, scoring_details,
       chain_health, treasury_balances, created_at, expires_at)
     VALUES ('quo_n', 'mer_n', 1, 'fast', '{}', '[]', 'ethereum', '[]', '[]', '[]', now(), now())`,
  );
  await db.pool.query(
    `INSERT INTO payment_intents (id, merchant_id, quote_id, idempotency_key, amount_micros, status, selected_chain, destination_address, created_at, updated_at)
     VALUES ('pi_n', 'mer_n', 'quo_n', 'k', 1, 'broadcasting', 'ethereum', '0x0', now(), now())`,
  );
});
afterAll(async () => db.drop());

let attempts = 0;
async function attempt(nonce: number, status: string, reason: string | null = null) {
  await db.pool.query(
    `INSERT INTO payment_attempts (id, payment_intent_id, chain, tx_id, status, signed_tx, chain_meta, estimated_fee_usd, failure_reason, created_at)
     VALUES ($1, 'pi_n', 'ethereum', $1, $2, '0x', $3, 0, $4, now())`,
    [`att_${++attempts}`, status, { nonce }, reason],
  );
}

describe('ethereum nonce allocation', () => {
  it('10 concurrent allocations get 10 distinct consecutive nonces, starting at the chain pending count', async () => {
    const nonces = await Promise.all(
      Array.from({ length: 10 }, () =>
        withTransaction(db.pool, async (tx) => {
          const nonce = await allocateNonce(tx, TREASURY, 3, 3);
          await attempt(nonce, 'broadcasted');
          return nonce;
        }),
      ),
    );
    expect([...nonces].sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('reuses the nonce of a refused transaction, lowest first, only once', async () => {
    await db.pool.query("UPDATE payment_attempts SET status = 'failed', failure_reason = 'insufficient_gas' WHERE chain_meta->>'nonce' IN ('6', '9')");
    expect(await allocateNonce(db.pool, TREASURY, 13, 3)).toBe(6);
    await attempt(6, 'signed');
    expect(await allocateNonce(db.pool, TREASURY, 13, 3)).toBe(9);
    await attempt(9, 'signed');
    expect(await allocateNonce(db.pool, TREASURY, 13, 3)).toBe(13);
  });

  it('never reuses a nonce that was mined, taken by another transaction, or shared with a fee-bump replacement', async () => {
    await attempt(14, 'failed', 'nonce_conflict');
    await attempt(15, 'failed', 'rpc_error');
    await attempt(15, 'replaced');
    await attempt(20, 'failed', 'insufficient_gas');
    // 14 went to another transaction, 15 lives on in its replacement: 20 is the lowest free one.
    expect(await allocateNonce(db.pool, TREASURY, 22, 14)).toBe(20);
    await attempt(20, 'signed');
    await attempt(22, 'failed', 'insufficient_gas');
    // Something with nonce 22 was mined since (mined count 23): it is not free, the counter moves on.
    expect(await allocateNonce(db.pool, TREASURY, 23, 23)).toBe(23);
  });
});
