// What an export covers (decision 156): a half-open period [from, to) of ISO 8601 instants, and optionally one chain,
// one merchant and one payment status. Checked here, the same for HTTP (after its JSON schema) and the CLI; anything
// wrong is `400 INVALID_FILTER`, never an export of more than was asked.
import { isChainIn, type Chain } from '../../domain/chain.js';
import { AppError } from '../../domain/errors.js';
import { PAYMENT_STATUSES, type PaymentStatus } from '../../domain/payment-intent.js';

/**
 * An instant: a UTC day (`2026-03-01`, its midnight) or a date-time with seconds, at most 6 decimals (PostgreSQL's
 * precision, so nothing is rounded) and an explicit offset (`Z`, `+02:00`); a local time without offset is ambiguous.
 */
export const ISO_INSTANT_PATTERN = '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?(Z|[+-]\\d{2}:\\d{2}))?$';
export const MERCHANT_ID_PATTERN = '^[A-Za-z0-9_]{1,128}$';

const INSTANT = new RegExp(ISO_INSTANT_PATTERN);
const MERCHANT_ID = new RegExp(MERCHANT_ID_PATTERN);

export interface ExportFilterInput {
  from?: string;
  to?: string;
  chain?: string;
  merchant_id?: string;
  status?: string;
}

export interface ExportFilter {
  /** Inclusive, as PostgreSQL reads it exactly (`timestamptz` text with its offset); null: from the beginning. */
  from: string | null;
  /** Exclusive; null: no end (rows created while the export runs may then appear in it). */
  to: string | null;
  chain: Chain | null;
  merchantId: string | null;
  /** Payments: the payment's status now; ledger: the status now of the posting's payment (postings without one drop). */
  status: PaymentStatus | null;
}

/** An instant as exact timestamptz text and as microseconds since the epoch (to compare two without rounding). */
function instant(name: string, text: string): { text: string; micros: bigint } {
  const match = INSTANT.exec(text);
  const invalid = () => new AppError('INVALID_FILTER', `${name} must be an ISO 8601 day (2026-03-01) or date-time with an offset (2026-03-01T00:00:00Z)`);
  if (!match) throw invalid();
  const day = text.slice(0, 10);
  const [time, fraction, offset] = [match[1]?.slice(1, 9) ?? '00:00:00', match[2]?.slice(1) ?? '', match[3] ?? 'Z'];
  const [hours, minutes, seconds] = time.split(':').map(Number) as [number, number, number];
  const [offsetHours, offsetMinutes] = offset === 'Z' ? [0, 0] : offset.slice(1).split(':').map(Number) as [number, number];
  const midnight = Date.parse(`${day}T00:00:00Z`);
  const calendarDay = !Number.isNaN(midnight) && new Date(midnight).toISOString().slice(0, 10) === day;
  if (!calendarDay || hours > 23 || minutes > 59 || seconds > 59 || offsetHours > 23 || offsetMinutes > 59) throw invalid();
  const offsetMs = (offset.startsWith('-') ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const ms = midnight + ((hours * 60 + minutes) * 60 + seconds) * 1000 - offsetMs;
  return { text: match[1] === undefined ? `${day}T00:00:00Z` : text, micros: BigInt(ms) * 1000n + BigInt(fraction.padEnd(6, '0')) };
}

/** `chains`: CHAINS, the chains a filter may name. */
export function parseExportFilter(input: ExportFilterInput, chains: readonly Chain[]): ExportFilter {
  const from = input.from === undefined ? null : instant('from', input.from);
  const to = input.to === undefined ? null : instant('to', input.to);
  if (from && to && from.micros >= to.micros) throw new AppError('INVALID_FILTER', 'from must be before to (the period is [from, to))');
  if (input.chain !== undefined && !isChainIn(chains, input.chain)) {
    throw new AppError('INVALID_FILTER', `chain must be one of ${chains.join(', ')}`);
  }
  if (input.merchant_id !== undefined && !MERCHANT_ID.test(input.merchant_id)) {
    throw new AppError('INVALID_FILTER', 'merchant_id must be a merchant id (letters, digits and _)');
  }
  if (input.status !== undefined && !PAYMENT_STATUSES.includes(input.status as PaymentStatus)) {
    throw new AppError('INVALID_FILTER', `status must be one of ${PAYMENT_STATUSES.join(', ')}`);
  }
  return {
    from: from?.text ?? null,
    to: to?.text ?? null,
    chain: (input.chain as Chain | undefined) ?? null,
    merchantId: input.merchant_id ?? null,
    status: (input.status as PaymentStatus | undefined) ?? null,
  };
}

/** The filter as its audit record and a log line name it: the request's own words. */
export function filterDetails(filter: ExportFilter): Record<string, string | null> {
  return { from: filter.from, to: filter.to, chain: filter.chain, merchant_id: filter.merchantId, status: filter.status };
}
