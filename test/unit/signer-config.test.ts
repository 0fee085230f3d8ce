// ETHEREUM_SIGNER / SOLANA_SIGNER and the PKCS11_* settings: a bad value stops start-up naming the variable; with
// pkcs11 no treasury key is needed, and one in the environment is refused without being read; the PIN comes only
// from its file and never shows in a serialised, inspected or logged config.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { softHsmModulePath } from '../../src/devnet/softhsm.js';
import { refusal } from '../helpers/config.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PIN = 'correct-horse-battery-staple-4711';
let dir: string;
let pinFile: string;
let module: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stableroute-signer-config-'));
  pinFile = join(dir, 'user.pin');
  await writeFile(pinFile, `${PIN}\n`, { mode: 0o600 });
  module = softHsmModulePath(); // config checks that the library exists; fails loudly without SoftHSM2
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function pkcs11Env(overrides: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    ETHEREUM_ADAPTER: 'rpc',
    ETHEREUM_RPC_URL: 'http://127.0.0.1:8545',
    ETHEREUM_USDC_ADDRESS: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    SOLANA_ADAPTER: 'rpc',
    SOLANA_RPC_URL: 'http://127.0.0.1:8899',
    SOLANA_USDC_MINT: 'PgRrGn5J3RLJZ8z1evv2fER79ziALRfUe5Bsfb5RMT9',
    ETHEREUM_SIGNER: 'pkcs11',
    SOLANA_SIGNER: 'pkcs11',
    PKCS11_MODULE: module,
    PKCS11_TOKEN_LABEL: 'treasury',
    PKCS11_PIN_FILE: pinFile,
    ETHEREUM_PKCS11_KEY_LABEL: 'eth',
    SOLANA_PKCS11_KEY_LABEL: 'sol',
    ...overrides,
  };
}

describe('signer settings', () => {
  it('default to key signers and need no PKCS#11 settings', () => {
    const config = loadConfig({});
    expect(config.chains.ethereum!.signer).toBe('key');
    expect(config.chains.solana!.signer).toBe('key');
    expect(config.pkcs11).toBeNull();
  });

  it('with pkcs11 on both chains: no treasury key, the PIN read from its file', () => {
    const config = loadConfig(pkcs11Env({ PKCS11_TIMEOUT_SECONDS: '2.5' }));
    expect(config.chains.ethereum!).toMatchObject({ signer: 'pkcs11', pkcs11KeyLabel: 'eth', treasuryKey: null });
    expect(config.chains.solana!).toMatchObject({ signer: 'pkcs11', pkcs11KeyLabel: 'sol', treasuryKey: null });
    expect(config.pkcs11).toMatchObject({ module, tokenLabel: 'treasury', pinFile, timeoutSeconds: 2.5 });
    expect(config.pkcs11!.pin).toBe(PIN);
    expect(loadConfig(pkcs11Env()).pkcs11!.timeoutSeconds).toBe(5);
  });

  it('one chain on pkcs11, the other on its key', () => {
    const config = loadConfig(pkcs11Env({ SOLANA_SIGNER: undefined, SOLANA_TREASURY_KEY: 'abc', SOLANA_PKCS11_KEY_LABEL: undefined }));
    expect(config.chains.solana!).toMatchObject({ signer: 'key', pkcs11KeyLabel: null, treasuryKey: 'abc' });
    expect(config.pkcs11?.tokenLabel).toBe('treasury');
  });

  it.each([
    [{ ETHEREUM_SIGNER: 'hsm' }, 'ETHEREUM_SIGNER'],
    [{ SOLANA_SIGNER: 'KEY' }, 'SOLANA_SIGNER'],
    [{ PKCS11_MODULE: undefined }, 'PKCS11_MODULE'],
    [{ PKCS11_MODULE: '/nowhere/libsofthsm2.so' }, 'PKCS11_MODULE'],
    [{ PKCS11_TOKEN_LABEL: undefined }, 'PKCS11_TOKEN_LABEL'],
    [{ PKCS11_TOKEN_LABEL: 'x'.repeat(33) }, 'PKCS11_TOKEN_LABEL'],
    [{ PKCS11_PIN_FILE: undefined }, 'PKCS11_PIN_FILE'],
    [{ PKCS11_PIN_FILE: '/nowhere/user.pin' }, 'PKCS11_PIN_FILE'],
    [{ ETHEREUM_PKCS11_KEY_LABEL: undefined }, 'ETHEREUM_PKCS11_KEY_LABEL'],
    [{ SOLANA_PKCS11_KEY_LABEL: '  ' }, 'SOLANA_PKCS11_KEY_LABEL'],
    [{ PKCS11_TIMEOUT_SECONDS: 'soon' }, 'PKCS11_TIMEOUT_SECONDS'],
    [{ PKCS11_PIN: PIN }, 'PKCS11_PIN'],
  ])('%o stops start-up naming %s', (overrides, variable) => {
    const error = refusal(pkcs11Env(overrides));
    expect(error.variable).toBe(variable);
    expect(error.message.startsWith(`${variable}: `)).toBe(true);
    expect(error.message).not.toContain(PIN);
  });

  it('an empty PIN file stops start-up', async () => {
    const empty = join(dir, 'empty.pin');
    await writeFile(empty, '\n');
    expect(refusal(pkcs11Env({ PKCS11_PIN_FILE: empty })).variable).toBe('PKCS11_PIN_FILE');
  });

  it('refuses a treasury key next to a pkcs11 signer without reading it, value or file', () => {
    const unreadable = join(dir, 'no-such-key-file');
    for (const [variable, value] of [
      ['ETHEREUM_TREASURY_KEY', '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d'],
      ['ETHEREUM_TREASURY_KEY_FILE', unreadable],
      ['SOLANA_TREASURY_KEY', '[1,2,3]'],
      ['SOLANA_TREASURY_KEY_FILE', unreadable],
    ] as const) {
      const error = refusal(pkcs11Env({ [variable]: value }));
      expect(error.variable).toBe(variable);
      expect(error.message).toContain('PKCS#11 token');
      expect(error.message).not.toContain(value); // neither the key nor a read error about the file
    }
  });

  it('PKCS#11 settings are not needed while the chain is simulated', () => {
    const config = loadConfig({ ETHEREUM_SIGNER: 'pkcs11', SOLANA_SIGNER: 'pkcs11' });
    expect(config.pkcs11).toBeNull();
  });

  it('the PIN never shows in a serialised, inspected, spread or logged config', async () => {
    const config = loadConfig(pkcs11Env());
    const shown = [
      JSON.stringify(config, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value)),
      inspect(config, { depth: 10 }),
      JSON.stringify({ ...config.pkcs11 }),
    ].join('\n');
    expect(shown).toContain(pinFile);
    expect(shown).not.toContain(PIN);

    // The service's logger (which writes to stdout) in a child process, at trace level.
    const script = `
      import { createLogger } from './src/runtime.ts';
      import { loadConfig } from './src/config.ts';
      const config = loadConfig();
      const log = createLogger({ logLevel: 'trace' });
      log.info({ config }, 'config');
      log.info({ ctx: { config } }, 'context');
      log.info({ pkcs11: config.pkcs11 }, 'section');
      log.info({ options: { pin: config.pkcs11.pin } }, 'options');
      if (config.pkcs11.pin !== ${JSON.stringify(PIN)}) throw new Error('the PIN is not readable');
    `;
    const env = Object.fromEntries(Object.entries(pkcs11Env()).filter((e): e is [string, string] => e[1] !== undefined));
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    expect(output.match(/"msg":/g)).toHaveLength(4);
    expect(output).toContain('[redacted]');
    expect(output).not.toContain(PIN);
  }, 30_000);
});
