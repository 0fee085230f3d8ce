import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createAdapters } from '../../src/chains/factory.js';
import { ManualClock } from '../../src/clock.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { refusal } from '../helpers/config.js';

const STRONG_SALT = '8c1f0e5b7a9d4c23e6f1b0a9d8c7e6f5';
const STRONG_WEBHOOK_SECRET = 'whsec_K3p7Xn0QvR2sT9uW1yZ4aB6cD8eF0gH2iJ4kL6mN8oP=';
const STRONG_AUDIT_KEY = '3b9e1c7a5f2d8b4e0a6c9f1d3b7e5a2c8f4d0b6e';

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
      chainNames: ['ethereum', 'solana'],
      simTreasuryUsdcMicros: 1_000_000_000_000n,
      simConfirmSeconds: null,
      simFailureRate: 0,
      simStuckRate: 0,
    });
    expect(c.chains.ethereum).toMatchObject({ family: 'evm', adapter: 'simulated', chainId: null, finality: 'confirmations', confirmations: 12, nativeCurrency: 'ETH', nativeUsdPrice: 3000 });
    expect(c.chains.solana).toMatchObject({ family: 'solana', adapter: 'simulated', chainId: null, finality: 'finalized', nativeCurrency: 'SOL', nativeUsdPrice: 150 });
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
    ['LOG_FORMAT', 'text'],
    ['DATABASE_URL', 'not a url'],
  ])('a bad %s names the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
  });

  it('production requires its secrets; rpc adapters require their settings', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow('API_KEY_SALT');
    expect(() => loadConfig({ NODE_ENV: 'production', API_KEY_SALT: STRONG_SALT })).toThrow('WEBHOOK_SIGNING_SECRET');
    expect(() => loadConfig({ ETHEREUM_ADAPTER: 'rpc' })).toThrow('ETHEREUM_RPC_URL');
    expect(() => loadConfig({ SOLANA_ADAPTER: 'rpc', SOLANA_RPC_URL: 'http://x', SOLANA_USDC_MINT: 'm' })).toThrow('SOLANA_TREASURY_KEY');
  });

  it('production refuses weak secrets with a message naming the variable, never the value', () => {
    const strong = { NODE_ENV: 'production', API_KEY_SALT: STRONG_SALT, WEBHOOK_SIGNING_SECRET: STRONG_WEBHOOK_SECRET, AUDIT_KEY: STRONG_AUDIT_KEY };
    expect(loadConfig(strong).production).toBe(true);
    expect(loadConfig({ ...strong, WEBHOOK_SIGNING_SECRET: 'whsec_MfKQ9r1bW3jPz6XvN0xQx0r7nYb8gL2c4dE5fG6hI7k=' }).production).toBe(true);
    expect(loadConfig({ ...strong, ADMIN_TOKEN: 'correct horse battery staple here ok' }).adminToken).toBe('correct horse battery staple here ok');
    for (const variable of ['API_KEY_SALT', 'WEBHOOK_SIGNING_SECRET', 'ADMIN_TOKEN'] as const) {
      for (const weak of ['s', 'short-but-not-empty-secret', 'a'.repeat(64), 'abcd'.repeat(12), '0101010101010101010101010101010101010101']) {
        const thrown = refusal({ ...strong, [variable]: weak });
        expect(thrown.variable, `${variable}=${weak}`).toBe(variable);
        if (weak.length > 8) expect(String(thrown)).not.toContain(weak);
      }
    }
    // Development keeps its convenience: short secrets are fine there.
    expect(loadConfig({ API_KEY_SALT: 's', WEBHOOK_SIGNING_SECRET: 'dev', ADMIN_TOKEN: 't' }).adminToken).toBe('t');
  });

  it('AUDIT_KEY (or AUDIT_KEY_FILE): required and strong in production, a development key otherwise, never serialised', async () => {
    const production = { NODE_ENV: 'production', API_KEY_SALT: STRONG_SALT, WEBHOOK_SIGNING_SECRET: STRONG_WEBHOOK_SECRET };
    expect(refusal(production).variable).toBe('AUDIT_KEY');
    expect(String(refusal(production))).toMatch(/AUDIT_KEY: \(or AUDIT_KEY_FILE\) is required when NODE_ENV=production/);
    for (const weak of ['audit', 'audit-key-for-production-2026', 'ab'.repeat(24)]) {
      const thrown = refusal({ ...production, AUDIT_KEY: weak });
      expect(thrown.variable, weak).toBe('AUDIT_KEY');
      expect(String(thrown)).not.toContain(weak);
    }
    const config = loadConfig({ ...production, AUDIT_KEY: STRONG_AUDIT_KEY, AUDIT_ANCHOR_FILE: '/var/lib/anchor/audit.anchor' });
    expect(config.audit).toMatchObject({ key: STRONG_AUDIT_KEY, anchorFile: '/var/lib/anchor/audit.anchor' });
    expect(JSON.stringify(config, (_, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(STRONG_AUDIT_KEY);
    expect(JSON.stringify({ ...config.audit })).not.toContain(STRONG_AUDIT_KEY);
    const file = join(await mkdtemp(join(tmpdir(), 'sr-audit-key-')), 'audit.key');
    await writeFile(file, `${STRONG_AUDIT_KEY}\n`);
    expect(loadConfig({ ...production, AUDIT_KEY_FILE: file }).audit.key).toBe(STRONG_AUDIT_KEY);
    expect(refusal({ ...production, AUDIT_KEY: STRONG_AUDIT_KEY, AUDIT_KEY_FILE: file }).variable).toBe('AUDIT_KEY');
    // Development: a development key, and any key at all.
    expect(loadConfig({}).audit).toMatchObject({ anchorFile: null });
    expect(loadConfig({}).audit.key.length).toBeGreaterThan(0);
    expect(loadConfig({ AUDIT_KEY: 'dev' }).audit.key).toBe('dev');
  });

  it('webhook settings: DEV_MERCHANT_WEBHOOK_URL as onboarding checks it, the SSRF guard on in production, allowlists parsed', () => {
    for (const bad of ['http://', 'http:///hooks', 'ftp://h.example/', 'https://user:hunter2@h.example/hooks']) {
      const thrown = refusal({ DEV_MERCHANT_WEBHOOK_URL: bad });
      expect(thrown.variable, bad).toBe('DEV_MERCHANT_WEBHOOK_URL');
      expect(String(thrown)).not.toContain('hunter2');
    }
    expect(loadConfig({ DEV_MERCHANT_WEBHOOK_URL: 'http://127.0.0.1:4000/hooks' }).devMerchantWebhookUrl).toBe('http://127.0.0.1:4000/hooks');
    expect(loadConfig({}).webhookSsrfGuard).toBe(false);
    const production = { NODE_ENV: 'production', API_KEY_SALT: STRONG_SALT, WEBHOOK_SIGNING_SECRET: STRONG_WEBHOOK_SECRET, AUDIT_KEY: STRONG_AUDIT_KEY };
    expect(loadConfig(production).webhookSsrfGuard).toBe(true);
    expect(loadConfig({ ...production, WEBHOOK_SSRF_GUARD: 'off' }).webhookSsrfGuard).toBe(false);
    expect(loadConfig({ WEBHOOK_ALLOWED_HOSTS: 'hooks.internal, 10.0.0.0/8' }).webhookAllowedHosts).toEqual(['hooks.internal', '10.0.0.0/8']);
    expect(() => loadConfig({ WEBHOOK_ALLOWED_HOSTS: '10.0.0.0/99' })).toThrow('WEBHOOK_ALLOWED_HOSTS');
    expect(() => loadConfig({ WEBHOOK_SSRF_GUARD: 'maybe' })).toThrow('WEBHOOK_SSRF_GUARD');
    expect(loadConfig({ ADMIN_ALLOWED_HOSTS: 'Ops.Internal, 10.0.0.7' }).adminAllowedHosts).toEqual(['ops.internal', '10.0.0.7']);
    expect(() => loadConfig({ ADMIN_ALLOWED_HOSTS: 'http://ops.internal/' })).toThrow('ADMIN_ALLOWED_HOSTS');
  });

  it('reads treasury keys from a file, never echoing the key in errors', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sr-key-'));
    const file = join(dir, 'eth.key');
    await writeFile(file, '0xabc123\n');
    expect(loadConfig({ ETHEREUM_TREASURY_KEY_FILE: file }).chains.ethereum!.treasuryKey).toBe('0xabc123');
    expect(() => loadConfig({ ETHEREUM_TREASURY_KEY_FILE: join(dir, 'missing') })).toThrow('ETHEREUM_TREASURY_KEY_FILE');
    try {
      loadConfig({ ETHEREUM_TREASURY_KEY: '0xsecretvalue', ETHEREUM_TREASURY_KEY_FILE: file });
      expect.unreachable();
    } catch (error) {
      expect(String(error)).not.toContain('0xsecretvalue');
    }
  });
});

describe('CHAINS and the per-chain settings', () => {
  it('refuses a list that is not chain names, names one twice, or names none', () => {
    expect(() => loadConfig({ CHAINS: 'ethereum,Base' })).toThrow('CHAINS: "Base" is not a chain name');
    expect(() => loadConfig({ CHAINS: 'base,ethereum,base' })).toThrow('CHAINS: names base twice');
    expect(() => loadConfig({ CHAINS: ' , ' })).toThrow('CHAINS: names no chain');
  });

  it('fills a preset chain from its preset, and lets each NAME_* setting override it', () => {
    const c = loadConfig({ CHAINS: 'ethereum,solana,base,polygon', BASE_CONFIRMATIONS: '3', BASE_FINALITY: 'safe' });
    expect(c.chainNames).toEqual(['ethereum', 'solana', 'base', 'polygon']);
    expect(c.chains.base).toMatchObject({ family: 'evm', chainId: 8453, finality: 'safe', confirmations: 3, nativeCurrency: 'ETH', nativeUsdPrice: 3000 });
    expect(c.chains.polygon).toMatchObject({ chainId: 137, finality: 'finalized', nativeCurrency: 'POL', nativeUsdPrice: 0.25 });
  });

  it("checks ethereum's node against chain id 1 in production; in development a devnet says its own unless ETHEREUM_CHAIN_ID is set", () => {
    const production = { NODE_ENV: 'production', API_KEY_SALT: STRONG_SALT, WEBHOOK_SIGNING_SECRET: STRONG_WEBHOOK_SECRET, AUDIT_KEY: STRONG_AUDIT_KEY };
    expect(loadConfig(production).chains.ethereum!.chainId).toBe(1);
    expect(loadConfig({ ...production, ETHEREUM_CHAIN_ID: '11155111' }).chains.ethereum!.chainId).toBe(11155111);
    expect(loadConfig({}).chains.ethereum!.chainId).toBeNull();
    expect(loadConfig({ ETHEREUM_CHAIN_ID: '31337' }).chains.ethereum!.chainId).toBe(31337);
  });

  it('charges base and optimism as OP-stack rollups; NAME_FEE_MODEL marks another EVM chain so', () => {
    const c = loadConfig({ CHAINS: 'ethereum,solana,base,optimism,arbitrum' });
    expect([c.chains.ethereum, c.chains.base, c.chains.optimism, c.chains.arbitrum].map((chain) => chain!.feeModel)).toEqual(['gas', 'op-stack', 'op-stack', 'gas']);
    const custom = { CHAINS: 'ethereum,solana,my_l2', MY_L2_NATIVE_CURRENCY: 'ETH', MY_L2_FINALITY: 'finalized', MY_L2_CHAIN_ID: '7777' };
    expect(loadConfig({ ...custom, MY_L2_FEE_MODEL: 'op-stack' }).chains.my_l2!.feeModel).toBe('op-stack');
    expect(loadConfig({ CHAINS: 'ethereum,solana,base', BASE_FEE_MODEL: 'gas' }).chains.base!.feeModel).toBe('gas');
    expect(() => loadConfig({ ...custom, MY_L2_FEE_MODEL: 'arbitrum' })).toThrow('MY_L2_FEE_MODEL: expected "gas" or "op-stack", got "arbitrum"');
    expect(() => loadConfig({ SOLANA_FEE_MODEL: 'op-stack' })).toThrow('SOLANA_FEE_MODEL: is read only for an EVM chain');
  });

  it('needs every setting of a chain without a preset, and the price of a currency it does not know', () => {
    expect(() => loadConfig({ CHAINS: 'ethereum,solana,my_l2' })).toThrow(/^MY_L2_NATIVE_CURRENCY: is required for my_l2, which has no preset/);
    const partial = { CHAINS: 'ethereum,solana,my_l2', MY_L2_NATIVE_CURRENCY: 'XDAI' };
    expect(() => loadConfig(partial)).toThrow('XDAI_USD_PRICE: is required: my_l2 pays its fees in XDAI');
    expect(() => loadConfig({ ...partial, XDAI_USD_PRICE: '1' })).toThrow(/^MY_L2_FINALITY: is required/);
    expect(() => loadConfig({ ...partial, XDAI_USD_PRICE: '1', MY_L2_FINALITY: 'finalized' })).toThrow(/^MY_L2_CHAIN_ID: is required/);
    const full = loadConfig({ ...partial, XDAI_USD_PRICE: '1', MY_L2_FINALITY: 'finalized', MY_L2_CHAIN_ID: '100' });
    expect(full.chains.my_l2).toMatchObject({ family: 'evm', chainId: 100, nativeCurrency: 'XDAI', nativeDecimals: 18, nativeUsdPrice: 1 });
  });

  it('refuses a finality rule Solana does not have, and an rpc chain without its node and token', () => {
    expect(() => loadConfig({ SOLANA_FINALITY: 'confirmations' })).toThrow(/^SOLANA_FINALITY: expected "finalized"/);
    expect(() => loadConfig({ CHAINS: 'ethereum,solana,base', BASE_ADAPTER: 'rpc' })).toThrow('BASE_RPC_URL: is required with BASE_ADAPTER=rpc');
  });

  it('takes NAME_BATCH_CONTRACT only as an EVM address of a chain with a node', () => {
    const contract = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    const base = {
      CHAINS: 'ethereum,solana,base',
      BASE_ADAPTER: 'rpc',
      BASE_RPC_URL: 'http://127.0.0.1:8545',
      BASE_USDC_ADDRESS: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      BASE_TREASURY_KEY: `0x${'11'.repeat(32)}`,
    };
    expect(loadConfig(base).chains.base!.batchContract).toBeNull();
    expect(loadConfig({ ...base, BASE_BATCH_CONTRACT: contract }).chains.base!.batchContract).toBe(contract);
    expect(() => loadConfig({ ...base, BASE_BATCH_CONTRACT: '0x5fbdb2315678afecb367f032d93F642f64180aa3' })).toThrow(/^BASE_BATCH_CONTRACT: expected an EVM contract address/);
    expect(() => loadConfig({ ...base, BASE_BATCH_CONTRACT: 'batch' })).toThrow(/^BASE_BATCH_CONTRACT: expected an EVM contract address/);
    expect(() => loadConfig({ ETHEREUM_BATCH_CONTRACT: contract })).toThrow(/^ETHEREUM_BATCH_CONTRACT: is read only for an EVM chain with a node/);
    expect(() => loadConfig({ SOLANA_BATCH_CONTRACT: contract })).toThrow(/^SOLANA_BATCH_CONTRACT: is read only for an EVM chain with a node/);
  });

  it('NAME_TOKENS: usdc by default; presets, overrides and start-up errors per chain and token (issue 40)', () => {
    expect(loadConfig({}).chains.ethereum!.tokens).toEqual([
      { token: 'usdc', currency: 'USDC', address: null, addressVariable: 'ETHEREUM_USDC_ADDRESS', decimals: 6, solanaProgram: 'spl-token', transferGas: 55_900n },
    ]);
    expect(loadConfig({}).chains.solana!.tokens.map((t) => t.token)).toEqual(['usdc']);
    const usdt = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    const mint = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
    const sim = loadConfig({ ETHEREUM_TOKENS: 'usdc, USDT,pyusd', ETHEREUM_USDT_ADDRESS: usdt, SOLANA_TOKENS: 'pyusd,usdc', SOLANA_USDC_MINT: mint });
    expect(sim.chains.ethereum!.tokens.map((t) => [t.token, t.currency, t.address])).toEqual([['usdc', 'USDC', null], ['usdt', 'USDT', usdt], ['pyusd', 'PYUSD', null]]);
    expect(sim.chains.ethereum!.tokens[1]!.transferGas).toBeGreaterThan(sim.chains.ethereum!.tokens[0]!.transferGas);
    expect(sim.chains.solana!.tokens.map((t) => [t.token, t.solanaProgram, t.addressVariable])).toEqual([['pyusd', 'token-2022', 'SOLANA_PYUSD_MINT'], ['usdc', 'spl-token', 'SOLANA_USDC_MINT']]);
    // The NAME_USDC_* names keep working.
    expect(sim.chains.solana!.usdcAddress).toBe(mint);
    expect(sim.chains.solana!.tokens[1]!.address).toBe(mint);

    for (const [value, message] of [['usdc,eurc', /^ETHEREUM_TOKENS: "eurc" is not a token \(presets: usdc, usdt, pyusd\)/], ['usdt,usdt', /^ETHEREUM_TOKENS: names usdt twice/], [' , ', /^ETHEREUM_TOKENS: names no token/]] as const) {
      expect(() => loadConfig({ ETHEREUM_TOKENS: value })).toThrow(message);
    }
    expect(() => loadConfig({ ETHEREUM_TOKENS: 'usdc,usdt', ETHEREUM_USDT_ADDRESS: 'tether' })).toThrow(/^ETHEREUM_USDT_ADDRESS: expected a token contract address/);
    expect(() => loadConfig({ SOLANA_TOKENS: 'usdt', SOLANA_USDT_MINT: '0xdAC17F958D2ee523a2206206994597C13D831ec7' })).toThrow(/^SOLANA_USDT_MINT: expected a mint address/);

    // With a node: the variable, else in production the mainnet preset; a chain without one needs the variable.
    const node = { ETHEREUM_ADAPTER: 'rpc', ETHEREUM_RPC_URL: 'http://127.0.0.1:8545', ETHEREUM_USDC_ADDRESS: usdt, ETHEREUM_TREASURY_KEY: `0x${'11'.repeat(32)}`, ETHEREUM_TOKENS: 'usdc,usdt,pyusd' };
    expect(() => loadConfig(node)).toThrow(/^ETHEREUM_USDT_ADDRESS: is required with ETHEREUM_ADAPTER=rpc and usdt in ETHEREUM_TOKENS \(outside production/);
    expect(loadConfig({ ...node, ETHEREUM_USDT_ADDRESS: usdt, ETHEREUM_PYUSD_ADDRESS: usdt }).chains.ethereum!.tokens.map((t) => t.address)).toEqual([usdt, usdt, usdt]);
    const production = { NODE_ENV: 'production', API_KEY_SALT: STRONG_SALT, WEBHOOK_SIGNING_SECRET: STRONG_WEBHOOK_SECRET, AUDIT_KEY: STRONG_AUDIT_KEY };
    expect(loadConfig({ ...production, ...node }).chains.ethereum!.tokens.map((t) => t.address)).toEqual([
      usdt, '0xdAC17F958D2ee523a2206206994597C13D831ec7', '0x6c3ea9036406852006290770BEdFcAbA0e23A0e8',
    ]);
    const base = { CHAINS: 'ethereum,solana,base', BASE_ADAPTER: 'rpc', BASE_RPC_URL: 'http://127.0.0.1:8545', BASE_USDC_ADDRESS: usdt, BASE_TREASURY_KEY: `0x${'11'.repeat(32)}`, BASE_TOKENS: 'usdc,pyusd' };
    expect(() => loadConfig({ ...production, ...base })).toThrow(/^BASE_PYUSD_ADDRESS: is required with BASE_ADAPTER=rpc and pyusd in BASE_TOKENS \(no preset for pyusd on base\)/);
  });

  it('Solana with a node listing another token than usdc stops start-up, naming SOLANA_TOKENS, before any node is asked', async () => {
    const config = loadConfig({
      CHAINS: 'solana',
      SOLANA_ADAPTER: 'rpc',
      SOLANA_RPC_URL: 'http://127.0.0.1:1',
      SOLANA_USDC_MINT: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
      SOLANA_TREASURY_KEY: '4wBqpZM9xaSheZzJSMawUKKwhdpChKbZ5eu5ky4Vigw',
      SOLANA_TOKENS: 'usdc,pyusd',
      SOLANA_PYUSD_MINT: '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo',
    });
    const creating = createAdapters(config, undefined as never, new ManualClock('2026-03-01T12:00:00.000Z'), pino({ level: 'silent' }));
    await expect(creating).rejects.toThrow(/^SOLANA_TOKENS: pyusd: Solana with a node \(ADAPTER=rpc\) pays only usdc so far/);
  });
});
