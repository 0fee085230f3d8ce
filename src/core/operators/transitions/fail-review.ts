// Failing a payment in manual review, once the failure is decided: an operator's resolution the chain does not
// contradict (resolve.ts), or a forced one another operator approved (force-fail.ts, decision 181). A final cancel on
// chain books its gas (decision 63); otherwise the live transfer, if any, fails with the fee the chain says it spent;
// the intent fails and its funds are released.
import type { Queryable } from '../../../db/pool.js';
import { markFailed, type AttemptRow } from '../../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../../db/queries/intents.js';
import type { NativeCurrencies } from '../../../domain/chain.js';
import type { TransferVerdict } from '../../../domain/transfer-verdict.js';
import { failByCancel, failIntent, postFee } from '../../payments/outcomes/outcomes.js';

export async function failFromManualReview(
  tx: Queryable,
  currencies: NativeCurrencies,
  intent: PaymentIntentRow,
  attempt: AttemptRow | null,
  verdict: TransferVerdict | null,
  now: Date,
): Promise<void> {
  if (attempt?.purpose === 'cancel' && verdict?.kind === 'final') {
    // The operator got there before the confirmation worker: the same outcome, the cancel's gas booked.
    return failByCancel(tx, currencies, intent, attempt.id, verdict.feeNative, now);
  }
  if (attempt) {
    const fee = verdict?.kind === 'cannot_land' ? verdict.feeNative : 0n;
    await markFailed(tx, attempt.id, 'operator_failed', 'failed by an operator from manual review', fee);
    await postFee(tx, currencies, intent, fee, now);
  }
  await failIntent(tx, intent, 'operator_failed', now);
}
