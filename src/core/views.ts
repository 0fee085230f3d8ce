// Response shapes of payment intents and attempts (spec: "Returned on read"), built from rows.
import type { AttemptRow } from '../db/queries/attempts.js';
import type { PaymentIntentRow } from '../db/queries/intents.js';
import type { LedgerEntryView } from '../ledger/entries.js';
import { CURRENCY_DECIMALS } from '../ledger/currencies.js';
import { unitsToNumber, usdcToNumber } from '../money.js';

const NATIVE_DECIMALS: Record<string, number> = { ethereum: CURRENCY_DECIMALS.ETH!, solana: CURRENCY_DECIMALS.SOL! };

export function attemptView(a: AttemptRow) {
  return {
    id: a.id,
    chain: a.chain,
    tx_id: a.tx_id,
    status: a.status,
    estimated_fee_usd: a.estimated_fee_usd,
    actual_fee_native: a.actual_fee_native === null ? null : unitsToNumber(a.actual_fee_native, NATIVE_DECIMALS[a.chain]!),
    failure_reason: a.failure_reason,
    broadcast_at: a.broadcast_at?.toISOString() ?? null,
    confirmed_at: a.confirmed_at?.toISOString() ?? null,
    created_at: a.created_at.toISOString(),
  };
}

export function creationView(intent: PaymentIntentRow) {
  return {
    payment_intent_id: intent.id,
    status: intent.status,
    amount_usd: usdcToNumber(intent.amount_micros),
    selected_chain: intent.selected_chain,
    destination_address: intent.destination_address,
    created_at: intent.created_at.toISOString(),
  };
}

export function readView(intent: PaymentIntentRow, attempts: AttemptRow[], entries: LedgerEntryView[] | null) {
  return {
    id: intent.id,
    merchant_id: intent.merchant_id,
    amount_usd: usdcToNumber(intent.amount_micros),
    status: intent.status,
    selected_chain: intent.selected_chain,
    destination_address: intent.destination_address,
    quote_id: intent.quote_id,
    idempotency_key: intent.idempotency_key,
    attempts: attempts.map(attemptView),
    ...(entries ? { ledger_entries: entries } : {}),
    created_at: intent.created_at.toISOString(),
    updated_at: intent.updated_at.toISOString(),
  };
}
