// USDC amounts are bigint micro-units (6 decimals) inside the service. This is the only place that converts
// between them and JSON numbers or decimal strings.

export const USDC_DECIMALS = 6;
export const MICROS_PER_USDC = 1_000_000n;
// JSON numbers are IEEE doubles: beyond 15 significant digits a client's amount is no longer the one it typed.
// A billion dollars with 6 decimals is exactly 15 digits, so that is the largest amount we accept.
export const MAX_AMOUNT_MICROS = 1_000_000_000n * MICROS_PER_USDC - 1n;
/** MAX_AMOUNT_MICROS as a JSON number (999999999.999999, a correctly rounded division): the schemas' maximum amount. */
export const MAX_AMOUNT_USD = Number(MAX_AMOUNT_MICROS) / 1_000_000;

export class AmountError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AmountError';
  }
}

const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** Parses a non-negative decimal string ("12.5") into units of 10^-decimals. Rejects excess precision. */
export function parseUnits(text: string, decimals: number): bigint {
  const match = DECIMAL.exec(text);
  if (!match) throw new AmountError(`"${text}" is not a decimal amount`);
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.length > decimals && /[1-9]/.test(fraction.slice(decimals))) {
    throw new AmountError(`"${text}" has more than ${decimals} decimals`);
  }
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.slice(0, decimals).padEnd(decimals, '0') || '0');
}

export function parseUsdc(text: string): bigint {
  return parseUnits(text, USDC_DECIMALS);
}

/**
 * A USDC amount typed by an operator (a policy limit, a setting): a decimal string of at most 6 decimals and at most
 * MAX_AMOUNT_MICROS, the same bound as a merchant's amount, so every limit fits the database and shows exactly as a
 * JSON number (decision 1).
 */
export function parseBoundedUsdc(text: string): bigint {
  const micros = parseUsdc(text);
  if (micros > MAX_AMOUNT_MICROS) throw new AmountError(`"${text}" is above the largest amount, ${MAX_AMOUNT_USD}`);
  return micros;
}

/** Formats units of 10^-decimals as a plain decimal string without trailing zeros ("12.5", "-0.000001"). */
export function formatUnits(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const base = 10n ** BigInt(decimals);
  const whole = abs / base;
  const fraction = (abs % base).toString().padStart(decimals, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

export function formatUsdc(micros: bigint): string {
  return formatUnits(micros, USDC_DECIMALS);
}

/** A JSON number for responses. Exact for every amount we accept (see MAX_AMOUNT_MICROS). */
export function unitsToNumber(value: bigint, decimals: number): number {
  return Number(formatUnits(value, decimals));
}

export function usdcToNumber(micros: bigint): number {
  return unitsToNumber(micros, USDC_DECIMALS);
}

/**
 * Converts a JSON number from a request into micro-units. JSON.parse has already rounded the text to the nearest
 * double; String() gives back the shortest text that round-trips, which is what the client wrote for any amount
 * within MAX_AMOUNT_MICROS.
 */
export function usdcFromJsonNumber(value: unknown): bigint {
  if (typeof value !== 'number' || !Number.isFinite(value)) throw new AmountError('amount must be a finite number');
  if (value <= 0) throw new AmountError('amount must be positive');
  const micros = parseUsdc(plainDecimal(value));
  if (micros === 0n) throw new AmountError('amount must be positive');
  if (micros > MAX_AMOUNT_MICROS) throw new AmountError('amount must be below 1000000000');
  return micros;
}

/** Number -> decimal text without exponent notation (1e-7 -> "0.0000001"). */
function plainDecimal(value: number): string {
  const text = String(value);
  const exp = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exp) return text;
  const digits = (exp[1] ?? '') + (exp[2] ?? '');
  const pointAt = (exp[1] ?? '').length + Number(exp[3]);
  if (pointAt <= 0) return `0.${'0'.repeat(-pointAt)}${digits}`;
  if (pointAt >= digits.length) return digits + '0'.repeat(pointAt - digits.length);
  return `${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
}

/** Native-currency amount (wei, lamports) to USD at a configured price; for estimates only, never for the ledger. */
export function nativeToUsd(amount: bigint, decimals: number, usdPrice: number): number {
  return unitsToNumber(amount, decimals) * usdPrice;
}
