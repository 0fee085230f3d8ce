// Withdrawals are payment intents of kind 'withdrawal' (decision 121): the operator's list, newest first.
import type { Queryable } from '../pool.js';
import { readIntent, listIntentsOfKind, type PaymentIntentRow } from './intents.js';

/** The internal owner of every withdrawal (migration 067): no API key, no webhook URL. */
export const OPERATOR_MERCHANT_ID = 'mer_operator';

/** Newest first; `before` is the previous page's last id. */
export async function listWithdrawals(db: Queryable, page: { limit: number; before?: string }): Promise<PaymentIntentRow[]> {
  return listIntentsOfKind(db, 'withdrawal', page);
}

export async function readWithdrawal(db: Queryable, id: string): Promise<PaymentIntentRow | null> {
  const intent = await readIntent(db, id);
  return intent?.kind === 'withdrawal' ? intent : null;
}
