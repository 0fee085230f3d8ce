// Every setting, parsed and validated once at start-up. Nothing else reads process.env.
import { readFileSync } from 'node:fs';
import { parseUsdc } from './money.js';

export type AdapterKind = 'simulated' | 'rpc';

export interface Config {
  port: number;
  host: string;
  adminPort: number | null;
  adminHost: string;
  databaseUrl: string | null;
  dataDir: string;
  production: boolean;
  apiKeySalt: string;
  webhookSigningSecret: string;
  devMerchantWebhookUrl: string | null;
  quoteTtlSeconds: number;
  confirmationPollSeconds: number;
  stuckAfterSeconds: number;
  webhookPollSeconds: number;
  webhookRetryDelaySeconds: number;
  webhookTimeoutSeconds: number;
  healthCollectSeconds: number;
  executionRetryDelaySeconds: number;
  executionJobTimeoutSeconds: number;
  ethereumAdapter: AdapterKind;
  solanaAdapter: AdapterKind;
  simTreasuryUsdcMicros: bigint;
  simConfirmSeconds: number | null;
  simFailureRate: number;
  simStuckRate: number;
  simSeed: string;
  logLevel: string;
  ethereum: {
    rpcUrl: string | null;
    usdcAddress: string | null;
    /** Not enumerable (see withHiddenKey): never serialised with the config. */
    treasuryKey: string | null;
    confirmations: number;
  };
  solana: {
    rpcUrl: string | null;
    usdcMint: string | null;
    /** Not enumerable (see withHiddenKey): never serialised with the config. */
    treasuryKey: string | null;
  };
  ethUsdPrice: number;
  solUsdPrice: number;
  rpcTimeoutSeconds: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const DEV_API_KEY_SALT = 'stableroute-dev-api-key-salt';
const DEV_WEBHOOK_SECRET = 'stableroute-dev-webhook-secret';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function present(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function seconds(env: Env, name: string, fallback: number, min = 0): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !Number.isFinite(value) || value < min) {
    throw new ConfigError(name, `expected a number of seconds >= ${min}, got "${raw}"`);
  }
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(name, `expected an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function rate(env: Env, name: string): number {
  const raw = present(env, name);
  if (raw === undefined) return 0;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value < 0 || value > 1) {
    throw new ConfigError(name, `expected a share from 0 to 1, got "${raw}"`);
  }
  return value;
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0)) {
    throw new ConfigError(name, `expected a positive number, got "${raw}"`);
  }
  return value;
}

function adapter(env: Env, name: string): AdapterKind {
  const raw = present(env, name) ?? 'simulated';
  if (raw !== 'simulated' && raw !== 'rpc') {
    throw new ConfigError(name, `expected "simulated" or "rpc", got "${raw}"`);
  }
  return raw;
}

function url(env: Env, name: string): string | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  try {
    const parsed = new URL(raw);
    if (!['http:', 'https:', 'ws:', 'wss:', 'postgres:', 'postgresql:'].includes(parsed.protocol)) throw new Error();
  } catch {
    throw new ConfigError(name, `expected a URL, got "${raw}"`);
  }
  return raw;
}

function requiredSecret(env: Env, name: string, needed: boolean, why: string): string | null {
  const value = secret(env, name);
  if (needed && value === undefined) throw new ConfigError(name, `(or ${name}_FILE) is required ${why}`);
  return value ?? null;
}

function required(env: Env, name: string, why: string): string {
  const raw = present(env, name);
  if (raw === undefined) throw new ConfigError(name, `is required ${why}`);
  return raw;
}

/**
 * A secret from NAME, or from the file named by NAME_FILE (a mounted secret, kept out of the process environment).
 * The value itself never appears in an error message.
 */
function secret(env: Env, name: string): string | undefined {
  const direct = present(env, name);
  const file = present(env, `${name}_FILE`);
  if (direct !== undefined && file !== undefined) throw new ConfigError(name, `set ${name} or ${name}_FILE, not both`);
  if (file === undefined) return direct;
  try {
    const value = readFileSync(file, 'utf8').trim();
    if (!value) throw new Error('empty');
    return value;
  } catch (error) {
    throw new ConfigError(`${name}_FILE`, `cannot read a key from ${file} (${(error as NodeJS.ErrnoException).code ?? 'empty file'})`);
  }
}

/**
 * A settings section whose treasury key is a non-enumerable property: code reads `config.solana.treasuryKey` as
 * usual, but JSON.stringify, pino, util.inspect and object spread never see it, so logging or returning the config
 * (or anything that holds it, such as the app context) cannot leak the key. A spread copy of a section has no key.
 */
function withHiddenKey<T extends object>(section: T, treasuryKey: string | null): T & { treasuryKey: string | null } {
  return Object.defineProperty(section, 'treasuryKey', { value: treasuryKey, enumerable: false }) as T & {
    treasuryKey: string | null;
  };
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const ethereumAdapter = adapter(env, 'ETHEREUM_ADAPTER');
  const solanaAdapter = adapter(env, 'SOLANA_ADAPTER');
  const treasuryRaw = present(env, 'SIM_TREASURY_USDC') ?? '1000000';
  let simTreasuryUsdcMicros: bigint;
  try {
    simTreasuryUsdcMicros = parseUsdc(treasuryRaw);
  } catch {
    throw new ConfigError('SIM_TREASURY_USDC', `expected a non-negative USDC amount, got "${treasuryRaw}"`);
  }
  const logLevel = present(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `expected one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const adminPortRaw = present(env, 'ADMIN_PORT');
  const apiKeySalt = present(env, 'API_KEY_SALT');
  if (production && apiKeySalt === undefined) {
    throw new ConfigError('API_KEY_SALT', 'is required when NODE_ENV=production');
  }
  const webhookSigningSecret = present(env, 'WEBHOOK_SIGNING_SECRET');
  if (production && webhookSigningSecret === undefined) {
    throw new ConfigError('WEBHOOK_SIGNING_SECRET', 'is required when NODE_ENV=production');
  }

  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: present(env, 'HOST') ?? '0.0.0.0',
    adminPort: adminPortRaw === undefined ? null : integer(env, 'ADMIN_PORT', 0, 0, 65535),
    adminHost: present(env, 'ADMIN_HOST') ?? '127.0.0.1',
    databaseUrl: url(env, 'DATABASE_URL'),
    dataDir: present(env, 'DATA_DIR') ?? './.data',
    production,
    apiKeySalt: apiKeySalt ?? DEV_API_KEY_SALT,
    webhookSigningSecret: webhookSigningSecret ?? DEV_WEBHOOK_SECRET,
    devMerchantWebhookUrl: url(env, 'DEV_MERCHANT_WEBHOOK_URL'),
    quoteTtlSeconds: seconds(env, 'QUOTE_TTL_SECONDS', 300, 0.001),
    confirmationPollSeconds: seconds(env, 'CONFIRMATION_POLL_SECONDS', 15, 0.05),
    stuckAfterSeconds: seconds(env, 'STUCK_AFTER_SECONDS', 600),
    webhookPollSeconds: seconds(env, 'WEBHOOK_POLL_SECONDS', 5, 0.05),
    webhookRetryDelaySeconds: seconds(env, 'WEBHOOK_RETRY_DELAY_SECONDS', 5),
    webhookTimeoutSeconds: seconds(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 0.05),
    healthCollectSeconds: seconds(env, 'HEALTH_COLLECT_SECONDS', 15, 0.05),
    executionRetryDelaySeconds: seconds(env, 'EXECUTION_RETRY_DELAY_SECONDS', 5),
    executionJobTimeoutSeconds: seconds(env, 'EXECUTION_JOB_TIMEOUT_SECONDS', 60, 1),
    ethereumAdapter,
    solanaAdapter,
    simTreasuryUsdcMicros,
    simConfirmSeconds: present(env, 'SIM_CONFIRM_SECONDS') === undefined ? null : seconds(env, 'SIM_CONFIRM_SECONDS', 0),
    simFailureRate: rate(env, 'SIM_FAILURE_RATE'),
    simStuckRate: rate(env, 'SIM_STUCK_RATE'),
    simSeed: present(env, 'SIM_SEED') ?? 'stableroute',
    logLevel,
    ethereum: withHiddenKey(
      {
        rpcUrl: ethereumAdapter === 'rpc' ? required(env, 'ETHEREUM_RPC_URL', 'with ETHEREUM_ADAPTER=rpc') : url(env, 'ETHEREUM_RPC_URL'),
        usdcAddress:
          ethereumAdapter === 'rpc'
            ? required(env, 'ETHEREUM_USDC_ADDRESS', 'with ETHEREUM_ADAPTER=rpc')
            : (present(env, 'ETHEREUM_USDC_ADDRESS') ?? null),
        confirmations: integer(env, 'ETHEREUM_CONFIRMATIONS', 12, 1, 1000),
      },
      requiredSecret(env, 'ETHEREUM_TREASURY_KEY', ethereumAdapter === 'rpc', 'with ETHEREUM_ADAPTER=rpc'),
    ),
    solana: withHiddenKey(
      {
        rpcUrl: solanaAdapter === 'rpc' ? required(env, 'SOLANA_RPC_URL', 'with SOLANA_ADAPTER=rpc') : url(env, 'SOLANA_RPC_URL'),
        usdcMint:
          solanaAdapter === 'rpc'
            ? required(env, 'SOLANA_USDC_MINT', 'with SOLANA_ADAPTER=rpc')
            : (present(env, 'SOLANA_USDC_MINT') ?? null),
      },
      requiredSecret(env, 'SOLANA_TREASURY_KEY', solanaAdapter === 'rpc', 'with SOLANA_ADAPTER=rpc'),
    ),
    ethUsdPrice: positiveNumber(env, 'ETH_USD_PRICE', 3000),
    solUsdPrice: positiveNumber(env, 'SOL_USD_PRICE', 150),
    rpcTimeoutSeconds: seconds(env, 'RPC_TIMEOUT_SECONDS', 10, 0.05),
  };
}
