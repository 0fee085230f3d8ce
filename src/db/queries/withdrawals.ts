// Withdrawals are payment intents of kind 'withdrawal' (decision 143): the operator's list, newest first.
import type { Queryable } from '../pool.js';
import { findIntent, type PaymentIntentRow } from './intents.js';

/** The internal owner of every withdrawal (migration 067): no API key, no webhook URL. */
export const OPERATOR_MERCHANT_ID = 'mer_operator';

type RawRow = Omit<PaymentIntentRow, 'amount_micros'> & { amount_micros: string };

/** Newest first; `before` is the previous page's last id (keyset on (created_at, id)). */
export async function listWithdrawals(db: Queryable, filter: { limit: number; before?: string }): Promise<PaymentIntentRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT id, merchant_id, quote_id, idempotency_key, amount_micros::text, status, selected_chain, destination_address,
            created_at, updated_at, kind
       FROM payment_intents
      WHERE kind = 'withdrawal'
        AND ($1::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM payment_intents WHERE id = $1))
      ORDER BY created_at DESC, id DESC LIMIT $2`,
    [filter.before ?? null, filter.limit],
  );
  return rows.map((r) => ({ ...r, amount_micros: BigInt(r.amount_micros) }));
}

export async function findWithdrawal(db: Queryable, id: string): Promise<PaymentIntentRow | null> {
  const intent = await findIntent(db, id);
  return intent?.kind === 'withdrawal' ? intent : null;
}
