// The exports' pure parts: RFC 4180 records that csv-parse reads back cell for cell whatever the text (property-based),
// the formula neutralising rule (OWASP's starting characters; plain numbers, negative amounts included, left alone),
// and the period's instants compared exactly (offsets, microseconds) with every malformed one refused.
import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvRecord, neutralise } from '../../src/core/exports/csv.js';
import { parseExportFilter } from '../../src/core/exports/filter.js';
import { AppError } from '../../src/domain/errors.js';

describe('csvRecord', () => {
  it('quotes only what RFC 4180 requires, doubles quotes, and ends with CRLF', () => {
    expect(csvRecord(['a', 'b c', null, ''])).toBe('a,b c,,\r\n');
    expect(csvRecord(['x,y', 'say "hi"', 'two\nlines', 'cr\rhere'])).toBe('"x,y","say ""hi""","two\nlines","cr\rhere"\r\n');
  });

  it('reads back through csv-parse as the neutralised cells, for any text', () => {
    const cell = fc.oneof(fc.string(), fc.stringMatching(/^[=+\-@\t\r",\n a-z0-9.]{0,12}$/));
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 }), (records) => {
        const text = records.map((r) => csvRecord(r)).join('');
        const parsed = parse(text, { relax_column_count: true, record_delimiter: ['\r\n'], skip_empty_lines: false }) as string[][];
        expect(parsed).toEqual(records.map((r) => r.map(neutralise)));
      }),
      { numRuns: 500 },
    );
  });
});

describe('neutralise', () => {
  it('prefixes a cell a spreadsheet would evaluate, and leaves plain numbers and other text alone', () => {
    const cases: [string, string][] = [
      ['=1+1', "'=1+1"],
      ['+1', "'+1"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['-1+2', "'-1+2"],
      ['\tx', "'\tx"],
      ['\rx', "'\rx"],
      ['-12.345678', '-12.345678'],
      ['-5', '-5'],
      ['12.5', '12.5'],
      ['-', "'-"],
      ['-.5', "'-.5"],
      ['0x52908400098527886E0F7030069857D2E4169EE7', '0x52908400098527886E0F7030069857D2E4169EE7'],
      ['Acme = best', 'Acme = best'],
      ['', ''],
    ];
    for (const [cell, shown] of cases) expect(neutralise(cell), JSON.stringify(cell)).toBe(shown);
  });
});

describe('parseExportFilter', () => {
  const refused = (input: Parameters<typeof parseExportFilter>[0]) => {
    try {
      parseExportFilter(input, ['ethereum', 'solana']);
    } catch (error) {
      return error instanceof AppError ? error.code : String(error);
    }
    return 'accepted';
  };

  it('reads days as UTC midnight and keeps date-times exactly as PostgreSQL will read them', () => {
    expect(parseExportFilter({ from: '2026-03-01', to: '2026-04-01T00:00:00.000001+02:00' }, ['ethereum', 'solana'])).toEqual({
      from: '2026-03-01T00:00:00Z',
      to: '2026-04-01T00:00:00.000001+02:00',
      chain: null,
      merchantId: null,
      status: null,
    });
    expect(parseExportFilter({ chain: 'solana', merchant_id: 'mer_1', status: 'settled' }, ['ethereum', 'solana'])).toMatchObject({ chain: 'solana', merchantId: 'mer_1', status: 'settled' });
  });

  it('compares from and to exactly: offsets applied, microseconds counted', () => {
    expect(refused({ from: '2026-03-01T00:30:00+01:00', to: '2026-03-01' })).toBe('accepted');
    expect(refused({ from: '2026-03-01T01:00:00+01:00', to: '2026-03-01' })).toBe('INVALID_FILTER');
    expect(refused({ from: '2026-03-01T00:00:00.000001Z', to: '2026-03-01T00:00:00.000002Z' })).toBe('accepted');
    expect(refused({ from: '2026-03-01T00:00:00.000002Z', to: '2026-03-01T00:00:00.000002Z' })).toBe('INVALID_FILTER');
    expect(refused({ from: '2026-02-28T23:00:00-01:00', to: '2026-03-01' })).toBe('INVALID_FILTER');
  });

  it('refuses anything but a real instant with an offset, a known chain and status, and a merchant id', () => {
    for (const from of ['2026-02-29', '2026-13-01', '2026-03-01T12:00:00', '2026-03-01T12:00Z', '2026-03-01T12:60:00Z', '2026-03-01T12:00:00.1234567Z', '2026-03-01T12:00:00+24:00', '2026-03-01 12:00:00Z', ' 2026-03-01']) {
      expect(refused({ from }), from).toBe('INVALID_FILTER');
    }
    expect(refused({ from: '2028-02-29' })).toBe('accepted');
    expect(refused({ chain: 'bitcoin' })).toBe('INVALID_FILTER');
    expect(refused({ status: 'lost' })).toBe('INVALID_FILTER');
    expect(refused({ merchant_id: "mer' OR 1=1" })).toBe('INVALID_FILTER');
    expect(refused({ merchant_id: 'm'.repeat(129) })).toBe('INVALID_FILTER');
  });
});
