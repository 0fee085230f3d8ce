// The screening list's format and lookup (src/domain/screening.ts): the public lists' one address per line with `#`
// comments; EVM addresses in any case, Solana exactly.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkDenylist, listReloadRefusal, parseDenylist } from '../../src/domain/screening.js';

const EVM = '0x52908400098527886E0F7030069857D2E4169EE7';
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

describe('the screening list', () => {
  it('reads addresses, trailing sources, headings as the source of the lines under them, and CRLF files', () => {
    const list = parseDenylist(`# OFAC SDN\r\n${EVM}\r\n\r\n${SOL} # Lazarus\r\n# \r\n0xabc\tname\r\n   \r\n`);
    expect([...list]).toEqual([
      [EVM.toLowerCase(), 'OFAC SDN'],
      [SOL, 'Lazarus'],
      ['0xabc', null],
    ]);
  });

  it('matches EVM recipients whatever their case, on any EVM chain, and Solana recipients exactly', () => {
    const list = parseDenylist(`${EVM.toUpperCase().replace('0X', '0x')}\n${SOL}\n`);
    const verdicts = checkDenylist(list, [
      { chain: 'ethereum', address: EVM },
      { chain: 'base', address: EVM.toLowerCase() },
      { chain: 'solana', address: SOL },
      { chain: 'solana', address: SOL.toLowerCase() },
      { chain: 'ethereum', address: '0x0000000000000000000000000000000000000001' },
    ]);
    expect(verdicts.map((v) => v.hit)).toEqual([true, true, true, false, false]);
    expect(verdicts[0]).toEqual({ hit: true, by: 'list', source: null });
  });
});

describe('a line written 0X...', () => {
  it('matches like 0x... on every EVM chain', () => {
    const list = parseDenylist(`0X${EVM.slice(2)}\n0X${EVM.slice(2).toLowerCase().replace(/^5/, '6')} # another\n`);
    const verdicts = checkDenylist(list, [
      { chain: 'ethereum', address: EVM },
      { chain: 'base', address: EVM.toLowerCase() },
      { chain: 'ethereum', address: `0x${EVM.slice(2).toLowerCase().replace(/^5/, '6')}` },
    ]);
    expect(verdicts.map((v) => v.hit)).toEqual([true, true, true]);
  });
});

describe('a reload of the list', () => {
  const list = (n: number, from = 0) => parseDenylist(Array.from({ length: n }, (_, i) => `0x${(from + i).toString(16).padStart(40, '0')}`).join('\n'));

  it('is refused when it lists nothing, at start-up too (comments only count as nothing)', () => {
    expect(listReloadRefusal(null, parseDenylist('# OFAC SDN\n\n'), 10)).toBe('it lists no address');
    expect(listReloadRefusal(list(5), parseDenylist(''), 100)).toBe('it lists no address');
    expect(listReloadRefusal(null, list(1), 10)).toBeNull();
  });

  it('is refused when it drops more than the bound of the addresses in force, counted by address', () => {
    expect(listReloadRefusal(list(100), list(90), 10)).toBeNull();
    expect(listReloadRefusal(list(100), list(89), 10)).toBe(
      'it drops 11 of the 100 addresses in force, more than SCREENING_LIST_MAX_DROP_PERCENT (10%)',
    );
    // Growing is always fine; the same length with other addresses drops them all.
    expect(listReloadRefusal(list(100), list(1000), 0)).toBeNull();
    expect(listReloadRefusal(list(100), list(100, 100), 10)).toMatch(/^it drops 100 of the 100/);
    expect(listReloadRefusal(list(100), list(1), 100)).toBeNull();
  });
});

describe('the screening settings', () => {
  it('require SCREENING_SECRET with SCREENING_URL, default to fail open outside production, and refuse other modes', () => {
    expect(() => loadConfig({ SCREENING_URL: 'http://127.0.0.1:9/screen' })).toThrow(/^SCREENING_SECRET: \(or SCREENING_SECRET_FILE\) is required/);
    const config = loadConfig({ SCREENING_URL: 'http://127.0.0.1:9/screen', SCREENING_SECRET: 'a-secret-of-some-length' });
    expect(config).toMatchObject({ screeningFail: 'open', screeningTimeoutSeconds: 2, screeningListFile: null, screeningListMaxDropPercent: 10 });
    expect(loadConfig({ SCREENING_LIST_MAX_DROP_PERCENT: '25' }).screeningListMaxDropPercent).toBe(25);
    expect(() => loadConfig({ SCREENING_LIST_MAX_DROP_PERCENT: '101' })).toThrow(/^SCREENING_LIST_MAX_DROP_PERCENT: expected an integer from 0 to 100/);
    expect(() => loadConfig({ SCREENING_FAIL: 'maybe' })).toThrow(/^SCREENING_FAIL: expected "closed" or "open"/);
  });
});
