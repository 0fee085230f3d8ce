// Execution attempts refused before signing: no transaction exists, but the reason belongs in the failure analysis.
import type { Chain, FailureReason } from '../../domain/chain.js';
import type { Queryable } from '../pool.js';

export async function insertSignRefusal(
  db: Queryable,
  refusal: { paymentIntentId: string; chain: Chain; reason: FailureReason; detail: string; at: Date },
): Promise<void> {
  await db.query('INSERT INTO sign_refusals (payment_intent_id, chain, reason, detail, created_at) VALUES ($1, $2, $3, $4, $5)', [
    refusal.paymentIntentId,
    refusal.chain,
    refusal.reason,
    refusal.detail,
    refusal.at,
  ]);
}
