// The screening list's format and lookup (src/domain/screening.ts): the public lists' one address per line with `#`
// comments; EVM addresses in any case, Solana exactly.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { checkDenylist, parseDenylist } from '../../src/domain/screening.js';

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

describe('the screening settings', () => {
  it('require SCREENING_SECRET with SCREENING_URL, default to fail open outside production, and refuse other modes', () => {
    expect(() => loadConfig({ SCREENING_URL: 'http://127.0.0.1:9/screen' })).toThrow(/^SCREENING_SECRET: \(or SCREENING_SECRET_FILE\) is required/);
    const config = loadConfig({ SCREENING_URL: 'http://127.0.0.1:9/screen', SCREENING_SECRET: 'a-secret-of-some-length' });
    expect(config).toMatchObject({ screeningFail: 'open', screeningTimeoutSeconds: 2, screeningListFile: null });
    expect(() => loadConfig({ SCREENING_FAIL: 'maybe' })).toThrow(/^SCREENING_FAIL: expected "closed" or "open"/);
  });
});
