// Response shapes of spending policies and address books (admin endpoints and the CLI's --json output).
import type { AddressRow } from '../../core/merchants/address-book.js';
import type { MerchantPolicy } from '../../core/merchants/policies.js';
import type { WaitingApproval } from '../../core/operators/transitions/approve.js';
import type { ApprovalRow } from '../../db/queries/approvals.js';
import { usdcToNumber } from '../../money.js';
import { approvalView } from './payment-intents.js';

const usd = (micros: bigint | null) => (micros === null ? null : usdcToNumber(micros));

export function policyView(p: MerchantPolicy) {
  return {
    merchant_id: p.merchant_id,
    max_payment_usd: usd(p.policy.maxPaymentMicros),
    daily_limit_usd: usd(p.policy.dailyLimitMicros),
    approval_above_usd: usd(p.policy.approvalAboveMicros),
    approval_above_usd_per_day: usd(p.policy.approvalAbovePerDayMicros),
    allowlist: p.policy.allowlist,
    address_cooling_off_seconds: p.addressCoolingOffSeconds,
    rate_limit_per_minute: p.rateLimitPerMinute,
    sources: {
      max_payment_usd: p.policy.sources.maxPaymentMicros,
      daily_limit_usd: p.policy.sources.dailyLimitMicros,
      approval_above_usd: p.policy.sources.approvalAboveMicros,
      approval_above_usd_per_day: p.policy.sources.approvalAbovePerDayMicros,
      allowlist: p.policy.sources.allowlist,
      rate_limit_per_minute: p.rateLimitSource,
    },
  };
}

export function addressView(a: AddressRow) {
  return {
    chain: a.chain,
    address: a.address,
    label: a.label,
    created_at: a.created_at.toISOString(),
    usable_from: a.usable_from.toISOString(),
  };
}

/**
 * An approval as operators see it (decision 103): the merchant's (decision 226), and who asked, who approved, who
 * decided. Never shown to merchants.
 */
export function operatorApprovalView(a: ApprovalRow) {
  return {
    ...approvalView(a),
    requested_by: a.requested_by,
    first_approved_by: a.first_approved_by,
    first_approved_at: a.first_approved_at?.toISOString() ?? null,
    decided_by: a.decided_by,
    reason: a.reason,
  };
}

export function pendingApprovalView(p: WaitingApproval) {
  return {
    payment_intent_id: p.payment_intent_id,
    kind: p.kind,
    requested_by: p.requested_by,
    first_approved_by: p.first_approved_by,
    approvals: p.approvals,
    approvals_required: p.approvals_required,
    merchant_id: p.merchant_id,
    amount_usd: usdcToNumber(p.amount_micros),
    selected_chain: p.selected_chain,
    destination_address: p.destination_address,
    approval_above_usd: usdcToNumber(p.threshold_micros),
    requested_at: p.requested_at.toISOString(),
    payout_batch_id: p.payout_batch_id,
    payments: p.payments,
    requested_action: p.requested_action,
  };
}
