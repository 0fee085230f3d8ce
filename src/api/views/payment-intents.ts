// Response shapes of payment intents, attempts and ledger entries (spec: "Returned on creation", "Returned on read"),
// built from rows. Amounts leave bigint units here, at the edge.
import { tokenField } from '../../domain/token.js';
import type { ApprovalRow } from '../../db/queries/approvals.js';
import type { AttemptRow } from '../../db/queries/attempts.js';
import type { PaymentIntentRow } from '../../db/queries/intents.js';
import { decimalsOf } from '../../ledger/currencies.js';
import type { LedgerEntry } from '../../ledger/entries.js';
import { unitsToNumber, usdcToNumber } from '../../money.js';

export function attemptView(a: AttemptRow) {
  return {
    id: a.id,
    chain: a.chain,
    tx_id: a.tx_id,
    status: a.status,
    estimated_fee_usd: a.estimated_fee_usd,
    actual_fee_native: a.actual_fee_native === null ? null : unitsToNumber(a.actual_fee_native, decimalsOf(a.chain, 'native')),
    failure_reason: a.failure_reason,
    broadcast_at: a.broadcast_at?.toISOString() ?? null,
    confirmed_at: a.confirmed_at?.toISOString() ?? null,
    created_at: a.created_at.toISOString(),
  };
}

export function ledgerEntryView(e: LedgerEntry) {
  return {
    type: e.type,
    amount: unitsToNumber(e.amountUnits, decimalsOf(e.chain, e.currency)),
    currency: e.currency,
    chain: e.chain,
    created_at: e.createdAt.toISOString(),
  };
}

/**
 * The operator approval of a payment above its merchant's threshold (decision 10). Present only on payments that
 * needed one, so every other response stays exactly as the spec shows it.
 */
export function approvalView(a: ApprovalRow) {
  return { status: a.status, requested_at: a.requested_at.toISOString(), decided_at: a.decided_at?.toISOString() ?? null };
}

const withApproval = (approval: ApprovalRow | null | undefined) => (approval ? { approval: approvalView(approval) } : {});

export function creationView(intent: PaymentIntentRow, approval: ApprovalRow | null = null) {
  return {
    payment_intent_id: intent.id,
    status: intent.status,
    amount_usd: usdcToNumber(intent.amount_micros),
    selected_chain: intent.selected_chain,
    ...tokenField(intent),
    destination_address: intent.destination_address,
    created_at: intent.created_at.toISOString(),
    ...withApproval(approval),
  };
}

/** What every shape of an intent starts with (schemas/common.ts paymentIntentProperties): the merchant's, the operator's. */
export function intentIdentityView(
  intent: Pick<PaymentIntentRow, 'id' | 'merchant_id' | 'amount_micros' | 'status' | 'selected_chain' | 'destination_address'> & Partial<Pick<PaymentIntentRow, 'token'>>,
) {
  return {
    id: intent.id,
    merchant_id: intent.merchant_id,
    amount_usd: usdcToNumber(intent.amount_micros),
    status: intent.status,
    selected_chain: intent.selected_chain,
    ...tokenField(intent),
    destination_address: intent.destination_address,
  };
}

/**
 * The read shape; `entries` null leaves ledger_entries out (the overview's recent payments). A cancel on chain is the
 * operator's transaction, not an attempt to pay: a `confirmed` one would read as a payout (decision 63), so only
 * transfers are listed; the cancel's gas is in ledger_entries as a fee.
 */
export function readView(intent: PaymentIntentRow, attempts: AttemptRow[], entries: LedgerEntry[] | null, approval: ApprovalRow | null = null) {
  return {
    ...intentIdentityView(intent),
    quote_id: intent.quote_id,
    idempotency_key: intent.idempotency_key,
    attempts: attempts.filter((a) => a.purpose === 'transfer').map(attemptView),
    ...(entries ? { ledger_entries: entries.map(ledgerEntryView) } : {}),
    ...withApproval(approval),
    created_at: intent.created_at.toISOString(),
    updated_at: intent.updated_at.toISOString(),
  };
}
