// The operator's view of an inbound transfer: exact amounts as decimal strings in their currency (decision 109).
import type { InboundTransferRow } from '../../db/queries/deposits.js';
import { decimalsOf } from '../../ledger/currencies.js';
import { formatUnits } from '../../money.js';

export function depositView(row: InboundTransferRow) {
  return {
    id: String(row.id),
    chain: row.chain,
    tx_id: row.tx_id,
    index: row.transfer_index,
    from_address: row.from_address,
    currency: row.currency,
    amount: formatUnits(row.amount, decimalsOf(row.chain, row.currency)),
    status: row.match_status,
    booked_as: row.refund_transaction_id !== null ? 'refund' : 'funding',
    payment_intent_id: row.payment_intent_id,
    booked_at: row.booked_at.toISOString(),
    attached_at: row.attached_at?.toISOString() ?? null,
  };
}
