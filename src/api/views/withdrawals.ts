// The operator's view of a withdrawal (POST/GET /admin/withdrawals, `stableroute treasury withdraw --json`).
import type { WithdrawalRecord } from '../../core/treasury/withdrawals.js';
import { nativeCurrencyOf, type NativeCurrencies } from '../../domain/chain.js';
import { decimalsOf } from '../../ledger/currencies.js';
import { formatUnits, formatUsdc } from '../../money.js';
import { operatorApprovalView } from './policies.js';

/** The operator's view: exact amounts as decimal strings, the live (or final) transfer's id and fee. */
/** `currencies`: what each chain charges its fees in (config.chains). */
export function withdrawalView(record: WithdrawalRecord, currencies: NativeCurrencies) {
  const { intent } = record;
  const last = record.attempts.at(-1) ?? null;
  const landed = record.attempts.find((a) => a.status === 'confirmed') ?? last;
  return {
    id: intent.id,
    chain: intent.selected_chain,
    to: intent.destination_address,
    amount_usdc: formatUsdc(intent.amount_micros),
    token: intent.token,
    status: intent.status,
    idempotency_key: intent.idempotency_key,
    tx_id: landed?.tx_id ?? null,
    fee_native: landed?.actual_fee_native == null ? null : formatUnits(landed.actual_fee_native, decimalsOf(intent.selected_chain, 'native')),
    fee_currency: nativeCurrencyOf(currencies, intent.selected_chain),
    created_at: intent.created_at.toISOString(),
    updated_at: intent.updated_at.toISOString(),
    ...(record.approval ? { approval: operatorApprovalView(record.approval) } : {}),
  };
}
