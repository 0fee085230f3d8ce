// Response shapes of the operator endpoints behind the console. Amounts an operator reconciles by hand (ledger
// postings, treasury balances, fees) leave as exact decimal strings; amount_usd stays a number as in the spec.
import { nativeCurrencyOf, type NativeCurrencies } from '../../domain/chain.js';
import type { AttemptRow } from '../../db/queries/attempts.js';
import type { IntentListRow } from '../../db/queries/intent-list.js';
import type { DeliveryRow, WebhookEventRecord } from '../../db/queries/webhook-history.js';
import type { OperatorActions } from '../../domain/operator-actions.js';
import type { PaymentStatus } from '../../domain/payment-intent.js';
import { decimalsOf } from '../../ledger/currencies.js';
import { formatUnits, formatUsdc } from '../../money.js';
import type { PaymentPage, PaymentRecord } from '../../core/operators/console/payments.js';
import type { TreasuryState } from '../../core/operators/console/treasury.js';
import { encodeCursor } from './cursor.js';
import { webhookEventView } from './admin.js';
import { attemptView, intentIdentityView } from './payment-intents.js';
import { operatorApprovalView } from './policies.js';

export function paymentRowView(r: IntentListRow & { actions: OperatorActions }) {
  return {
    ...intentIdentityView(r),
    tx_id: r.last_tx_id,
    actions: r.actions,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

export function paymentPageView(page: PaymentPage) {
  return { data: page.rows.map(paymentRowView), next_cursor: page.next ? encodeCursor(page.next) : null };
}

export function paymentCountsView(counts: Map<PaymentStatus, number>) {
  const byStatus = Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b)));
  return { total: [...counts.values()].reduce((sum, n) => sum + n, 0), by_status: byStatus };
}

/** The merchant's attempt (decision 226), its fee paid as an exact decimal (decision 109), and what only operators see. */
function operatorAttemptView(a: AttemptRow, currencies: NativeCurrencies) {
  return {
    ...attemptView(a),
    actual_fee_native: a.actual_fee_native === null ? null : formatUnits(a.actual_fee_native, decimalsOf(a.chain, 'native')),
    purpose: a.purpose,
    fee_currency: nativeCurrencyOf(currencies, a.chain),
    failure_detail: a.failure_detail,
    chain_meta: a.chain_meta,
    included_at: a.included_at?.toISOString() ?? null,
  };
}

function deliveryView(d: DeliveryRow) {
  return { ...d, created_at: d.created_at.toISOString() };
}

export function webhookEventRecordView(e: WebhookEventRecord & { deliveries: DeliveryRow[] }) {
  return { ...webhookEventView(e), payload: e.payload, deliveries: e.deliveries.map(deliveryView) };
}

/** `currencies`: what each chain charges its fees in (config.chains). */
export function paymentRecordView(r: PaymentRecord, currencies: NativeCurrencies) {
  const { intent } = r;
  return {
    ...intentIdentityView(intent),
    quote_id: intent.quote_id,
    idempotency_key: intent.idempotency_key,
    created_at: intent.created_at.toISOString(),
    updated_at: intent.updated_at.toISOString(),
    actions: r.actions,
    timeline: r.transitions.map((t) => ({ from: t.from_status, to: t.to_status, reason: t.reason, at: t.created_at.toISOString() })),
    attempts: r.attempts.map((a) => operatorAttemptView(a, currencies)),
    ledger: r.ledger.map((t) => ({
      id: t.id,
      type: t.type,
      chain: t.chain,
      created_at: t.createdAt.toISOString(),
      postings: t.postings.map((p) => ({ account: p.account, currency: p.currency, amount: formatUnits(p.amountUnits, decimalsOf(t.chain, p.currency)) })),
    })),
    webhook_events: r.events.map(webhookEventRecordView),
    ...(r.approval ? { approval: { ...operatorApprovalView(r.approval.row), approvals: r.approval.given, approvals_required: r.approval.required } } : {}),
  };
}

export function treasuryView(states: TreasuryState[]) {
  return states.map((s) => ({
    chain: s.chain,
    address: s.address,
    adapter: s.adapter,
    available_usdc: formatUsdc(s.availableMicros),
    reserved_usdc: formatUsdc(s.reservedMicros),
    in_flight_usdc: formatUsdc(s.inFlightMicros),
    native_currency: s.nativeCurrency,
    native_balance: formatUnits(s.nativeUnits, s.nativeDecimals),
    gas_low_water: formatUnits(s.gasLowWaterUnits, s.nativeDecimals),
    gas_low: s.nativeUnits < s.gasLowWaterUnits,
    unconfirmed_transfers: s.backlog.attempts,
    oldest_unconfirmed_at: s.backlog.oldestBroadcastAt?.toISOString() ?? null,
  }));
}
