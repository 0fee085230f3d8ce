// `stableroute intents refund pi_... --tx TX`: an operator attaches an inbound USDC transfer, booked as funding, to the
// settled payout it returns (decision 126). Checked against what the deposit scanner saw on chain, never against the
// operator's word: same chain, from the payout's destination, no more than the payout, not attached before. Booked
// with balanced postings (the refund, and the funding taken back), in the transaction that holds the intent's row
// lock, so the scanner's automatic match and a concurrent attach can never both refund one payment.
import { currencyOf } from '../../../domain/token.js';
import { audited, type AuditEntry } from '../../operators/audit.js';
import { readInboundByTx, readInboundOfIntent, markAttached } from '../../../db/queries/deposits.js';
import { lockIntents } from '../../../db/queries/intents.js';
import { AppError } from '../../../domain/errors.js';
import { attachRefusal } from '../../../domain/inbound-match.js';
import { movements } from '../../../ledger/movements.js';
import { postMany } from '../../../ledger/store.js';
import { formatUsdc } from '../../../money.js';
import type { AppContext } from '../../context.js';
import { bookRefund } from './book.js';

export interface AttachResult {
  payment_intent_id: string;
  status: string;
  tx_id: string;
  refund_usdc: string;
}

export async function attachRefund(ctx: Pick<AppContext, 'pool' | 'clock' | 'config'>, intentId: string, txId: string, audit: AuditEntry): Promise<AttachResult> {
  return audited(ctx, audit, ctx.clock.now(), async (tx) => {
    const at = ctx.clock.now();
    const intent = (await lockIntents(tx, [intentId])).get(intentId) ?? null;
    // A withdrawal is the operator's own transfer, not a merchant's payout: nothing to refund (decision 121).
    if (!intent || intent.kind !== 'payout') throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${intentId} was not found`);
    const seen = await readInboundByTx(tx, intent.selected_chain, txId, { forUpdate: true });
    if (seen.length === 0) {
      throw new AppError(
        'NOT_FOUND',
        `no inbound transfer ${txId} on ${intent.selected_chain} was seen: the deposit scanner books transfers into the treasury once ` +
          'they are final (within DEPOSIT_POLL_SECONDS); try again then',
      );
    }
    const refunded = await readInboundOfIntent(tx, intent.id);
    const verdicts = seen.map((transfer) => ({
      transfer,
      refusal: attachRefusal({
        transfer: { chain: transfer.chain, currency: transfer.currency, from: transfer.from_address, amount: transfer.amount, paymentIntentId: transfer.payment_intent_id },
        intent: { chain: intent.selected_chain, status: intent.status, destination: intent.destination_address, amountMicros: intent.amount_micros, currency: currencyOf(intent.token) },
        intentRefundedBy: refunded ? refunded.tx_id : null,
      }),
    }));
    const chosen = verdicts.find((v) => v.refusal === null);
    if (!chosen) throw new AppError('INVALID_STATE', `cannot attach ${txId} to ${intent.id}: ${verdicts[0]!.refusal}`);
    const { transfer } = chosen;
    // The transfer was booked as funding: take that back out of available as it is booked as the refund.
    const refundId = await bookRefund(tx, intent, { amount: transfer.amount, txId: transfer.tx_id, from: transfer.from_address }, at);
    const reversalId = (await postMany(tx, [{ movement: movements.reverseFunding(intent.selected_chain, transfer.amount, currencyOf(intent.token)), context: { at } }]))[0]!;
    if (!(await markAttached(tx, transfer.id, { paymentIntentId: intent.id, refundTransactionId: refundId, reversalTransactionId: reversalId, at }))) {
      throw new AppError('INVALID_STATE', `transfer ${txId} was attached meanwhile`);
    }
    return { payment_intent_id: intent.id, status: intent.status, tx_id: transfer.tx_id, refund_usdc: formatUsdc(transfer.amount) };
  });
}
