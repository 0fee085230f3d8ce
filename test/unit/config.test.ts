import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('config', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      adminPort: null,
      adminHost: '127.0.0.1',
      databaseUrl: null,
      dataDir: './.data',
      production: false,
      quoteTtlSeconds: 300,
      confirmationPollSeconds: 15,
      stuckAfterSeconds: 600,
      webhookPollSeconds: 5,
      webhookRetryDelaySeconds: 5,
      healthCollectSeconds: 15,
      executionRetryDelaySeconds: 5,
      ethereumAdapter: 'simulated',
      solanaAdapter: 'simulated',
      simTreasuryUsdcMicros: 1_000_000_000_000n,
      simConfirmSeconds: null,
      simFailureRate: 0,
      simStuckRate: 0,
    });
  });

  it('accepts fractional seconds', () => {
    expect(loadConfig({ CONFIRMATION_POLL_SECONDS: '0.5' }).confirmationPollSeconds).toBe(0.5);
  });

  it.each([
    ['PORT', 'abc'],
    ['CONFIRMATION_POLL_SECONDS', '-1'],
    ['QUOTE_TTL_SECONDS', 'five'],
    ['SIM_FAILURE_RATE', '1.5'],
    ['SIM_TREASURY_USDC', '-10'],
    ['ETHEREUM_ADAPTER', 'infura'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'not a url'],
  ])('a bad %s names the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });

  it('production requires its secrets; rpc adapters require their settings', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow('API_KEY_SALT');
    expect(() => loadConfig({ NODE_ENV: 'production', API_KEY_SALT: 's' })).toThrow('WEBHOOK_SIGNING_SECRET');
    expect(() => loadConfig({ ETHEREUM_ADAPTER: 'rpc' })).toThrow('ETHEREUM_RPC_URL');
    expect(() => loadConfig({ SOLANA_ADAPTER: 'rpc', SOLANA_RPC_URL: 'http://x', SOLANA_USDC_MINT: 'm' })).toThrow('SOLANA_TREASURY_KEY');
  });

  it('reads treasury keys from a file, never echoing the key in errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sr-key-'));
    const file = join(dir, 'eth.key');
    await writeFile(file, '0xabc123\n');
    expect(loadConfig({ ETHEREUM_TREASURY_KEY_FILE: file }).ethereum.treasuryKey).toBe('0xabc123');
    expect(() => loadConfig({ ETHEREUM_TREASURY_KEY_FILE: join(dir, 'missing') })).toThrow('ETHEREUM_TREASURY_KEY_FILE');
    try {
      loadConfig({ ETHEREUM_TREASURY_KEY: '0xsecretvalue', ETHEREUM_TREASURY_KEY_FILE: file });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('0xsecretvalue');
    }
  });
});
