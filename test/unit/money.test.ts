import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AmountError,
  formatUnits,
  formatUsdc,
  MAX_AMOUNT_MICROS,
  MAX_AMOUNT_USD,
  parseBoundedUsdc,
  parseUsdc,
  usdcFromJsonNumber,
  usdcToNumber,
} from '../../src/money.js';

describe('money', () => {
  it('parses JSON numbers to micro-units exactly', () => {
    expect(usdcFromJsonNumber(100)).toBe(100_000_000n);
    expect(usdcFromJsonNumber(0.1)).toBe(100_000n);
    expect(usdcFromJsonNumber(12.345678)).toBe(12_345_678n);
    expect(usdcFromJsonNumber(0.000001)).toBe(1n);
    expect(usdcFromJsonNumber(1e-6)).toBe(1n);
    expect(usdcFromJsonNumber(999999999.999999)).toBe(999_999_999_999_999n);
  });

  it('rejects non-positive, non-finite, non-numbers and excess precision', () => {
    for (const bad of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '10', null, 1e-7, 0.0000015, 1e9, 1e21]) {
      expect(() => usdcFromJsonNumber(bad)).toThrow(AmountError);
    }
  });

  it('round-trips every micro-unit amount through a JSON number', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 999_999_999_999_999n }), (micros) => {
        const asJson = JSON.parse(JSON.stringify({ a: usdcToNumber(micros) })).a;
        expect(usdcFromJsonNumber(asJson)).toBe(micros);
      }),
    );
  });

  it('any JSON number is an amount within the bound or an AmountError, never another error (decision 1)', () => {
    expect(MAX_AMOUNT_USD).toBe(usdcToNumber(MAX_AMOUNT_MICROS));
    fc.assert(
      fc.property(fc.double(), (value) => {
        try {
          const micros = usdcFromJsonNumber(value);
          expect(micros > 0n && micros <= MAX_AMOUNT_MICROS).toBe(true);
        } catch (error) {
          expect(error).toBeInstanceOf(AmountError);
        }
      }),
      { numRuns: 5_000 },
    );
  });

  it('an operator-typed amount is refused above the largest amount', () => {
    expect(parseBoundedUsdc('999999999.999999')).toBe(MAX_AMOUNT_MICROS);
    expect(parseBoundedUsdc('0')).toBe(0n);
    for (const bad of ['1000000000', '99999999999999999999', '1e308', '-1']) expect(() => parseBoundedUsdc(bad)).toThrow(AmountError);
  });

  it('formats units', () => {
    expect(formatUsdc(1_500_000n)).toBe('1.5');
    expect(formatUsdc(-1n)).toBe('-0.000001');
    expect(formatUnits(21_000_000_000_000n, 18)).toBe('0.000021');
    expect(parseUsdc('1000000')).toBe(1_000_000_000_000n);
  });
});
