// Every setting, parsed and validated once at start-up. Nothing else reads process.env.
import { existsSync, readFileSync } from 'node:fs';
import { CHAIN_PRESETS, DEFAULT_CHAINS, DEFAULT_NATIVE_USD_PRICES, FEE_MODELS, FINALITY_RULES, NATIVE_DECIMALS, type FeeModel, type FinalityRule } from './domain/chain-presets.js';
import { familyOf, parseChainList, type Chain, type ChainFamily, type NativeCurrency } from './domain/chain.js';
import { currencyOf, DEFAULT_TOKEN, parseTokenList, TOKEN_PRESETS, tokenAddressVariable, type SolanaTokenProgram, type Token, type TokenCurrency } from './domain/token.js';
import type { SpendingPolicy } from './domain/spending-policy.js';
import { isWellFormedEthereumAddress, isWellFormedSolanaAddress } from './domain/addresses.js';
import { isLoopbackAddress, isWildcardAddress, sameBindAddress } from './domain/network-address.js';
import { weakSecretProblem } from './domain/secret-strength.js';
import { parseWebhookUrl } from './domain/webhook-url.js';
import { parseDatabaseUrl } from './db/database-url.js';
import { LOG_FORMATS, type LogFormat } from './log-format.js';
import { MAX_AMOUNT_USD, nativeToUsd, parseBoundedUsdc, parseUnits, parseUsdc } from './money.js';
import { parseAllowList } from './webhook-client/destination-guard.js';
import { isStandardSecret, standardKeyOf, WebhookSecretError } from './webhook-client/secret.js';
import { TRACE_EXPORT_DELAY_MS } from './bounds.js';

export type AdapterKind = 'simulated' | 'rpc';
/** Who signs for a chain's treasury (src/chains/signers): a key in this process, or a key in a PKCS#11 token. */
export type SignerKind = 'key' | 'pkcs11';
export const SIGNER_KINDS: readonly SignerKind[] = ['key', 'pkcs11'];

export interface Config {
  port: number;
  host: string;
  adminPort: number | null;
  adminHost: string;
  /** Host names (and addresses) the admin listener answers to; null: localhost names and the listener's own address. */
  adminAllowedHosts: readonly string[] | null;
  /** The admin token: `Authorization: Bearer <token>` opens every admin route (decision 96). */
  adminToken: string | null;
  /** ADMIN_EXPOSE_OPEN_ENDPOINTS: in production the spec's open admin endpoints answer peers beyond loopback on the public listener. */
  adminExposeOpenEndpoints: boolean;
  /** Four-eyes (decision 103): withdrawals above this wait for an approver other than their requester; null: none wait. */
  withdrawalApprovalAboveMicros: bigint | null;
  /**
   * The rolling window of that threshold (decision 177): a withdrawal waits when it and the withdrawals that left
   * without a second operator's approval within this many seconds would pass it.
   */
  withdrawalApprovalWindowSeconds: number;
  /** Four-eyes on payments held by a merchant's approval threshold: two approvals by two different operators. */
  approvalsRequireSecondOperator: boolean;
  /**
   * APPROVALS_ALLOW_BREAK_GLASS (decision 180): in production, approvals by the break-glass token or the CLI count as a
   * person's even while operator accounts exist (a one-person shop). Off: only named operators' do.
   */
  approvalsAllowBreakGlass: boolean;
  databaseUrl: string | null;
  /** DATABASE_READ_URL: where console lists, exports and metrics gauges read (a standby); null: the primary (decision 195). */
  databaseReadUrl: string | null;
  dataDir: string;
  production: boolean;
  apiKeySalt: string;
  webhookSigningSecret: string;
  devMerchantWebhookUrl: string | null;
  /** Refuse webhook destinations that are not public unicast addresses (decision 73). */
  webhookSsrfGuard: boolean;
  /** Host names, addresses and CIDR ranges webhooks may reach anyway (an operator's internal receiver). */
  webhookAllowedHosts: readonly string[];
  /** How long a rotated-out webhook secret keeps signing deliveries next to the new one. */
  webhookSecretOverlapSeconds: number;
  quoteTtlSeconds: number;
  confirmationPollSeconds: number;
  confirmationHeadPollSeconds: number;
  stuckAfterSeconds: number;
  webhookPollSeconds: number;
  webhookRetryDelaySeconds: number;
  webhookTimeoutSeconds: number;
  healthCollectSeconds: number;
  executionRetryDelaySeconds: number;
  executionJobTimeoutSeconds: number;
  /** A running execution renews its lease this long ahead; a lease that runs out is taken over (decision 57). */
  executionLeaseSeconds: number;
  /** Deposit scanner period: how soon a transfer into a treasury, once final, is booked (decision 122). */
  depositPollSeconds: number;
  /**
   * BOOKS_CHECK_SECONDS: how often a worker looks at the database's history and checks each held chain's treasury
   * against the books (decisions 198, 199); how soon after a failover a chain whose books match signs again.
   */
  booksCheckSeconds: number;
  simTreasuryUsdcMicros: bigint;
  simConfirmSeconds: number | null;
  simFailureRate: number;
  simStuckRate: number;
  simSeed: string;
  logLevel: string;
  /** LOG_FORMAT: `json` or `pretty`; null: pretty in development on a terminal, JSON otherwise (decision 210). */
  logFormat: LogFormat | null;
  /** CHAINS: the chains this service pays out on, in the order they are listed (decision 159). */
  chainNames: readonly Chain[];
  /** Each configured chain's settings, by name. */
  chains: Readonly<Record<Chain, ChainSettings>>;
  /** The PKCS#11 token, when a chain in rpc mode signs with `pkcs11`. */
  pkcs11: Pkcs11Settings | null;
  rpcTimeoutSeconds: number;
  /** Service-wide spending policy; merchants may override each setting (decision 6). */
  policy: SpendingPolicy & { addressCoolingOffSeconds: number };
  /** Merchant API requests per minute per merchant; 0 turns the limit off (decision 93). */
  rateLimitPerMinute: number;
  /** Admin requests (/admin/*, /console, /metrics) per minute per operator, or per address without one; 0: off (decision 217). */
  adminRateLimitPerMinute: number;
  /** GET /health requests per minute per client address, counted by each process; 0: off (decision 217). */
  healthRateLimitPerMinute: number;
  /** Merchant API requests refused 401 (no valid X-Api-Key) per minute per client address; 0: off (decision 224). */
  apiKeyFailureRateLimitPerMinute: number;
  /** How often the ledger is compared with each chain (decision 119). */
  reconcileIntervalSeconds: number;
  /** How long more USDC on chain than in the books (a deposit confirming) may last before it raises an alert. */
  reconcileSurplusGraceSeconds: number;
  /** Where operator alerts are POSTed, if anywhere (decision 120). Trusted configuration: no SSRF guard. */
  operatorWebhookUrl: string | null;
  /** Signs operator alerts; OPERATOR_WEBHOOK_SECRET, else WEBHOOK_SIGNING_SECRET. */
  operatorWebhookSecret: string;
  /** SCREENING_LIST_FILE: the local denylist of recipients, one address per line; null: no list. */
  screeningListFile: string | null;
  /**
   * SCREENING_LIST_MAX_DROP_PERCENT: a reload of the list that drops more than this share of the entries in force
   * (or comes out empty) is refused; the last good list stays (decision 182).
   */
  screeningListMaxDropPercent: number;
  /** SCREENING_URL: the screening provider asked about each recipient; operator configuration, no SSRF guard. */
  screeningUrl: string | null;
  /** SCREENING_SECRET (or _FILE): signs the provider's requests; required with SCREENING_URL. */
  screeningSecret: string | null;
  screeningTimeoutSeconds: number;
  /** SCREENING_FAIL: what a provider that times out, errs or answers nonsense means (closed: deny; open: allow). */
  screeningFail: ScreeningFailMode;
  /** The audit log's key and anchor (decision 186). */
  audit: AuditSettings;
  /** OpenTelemetry traces (the standard OTEL_* variables); null: off, and nothing of OpenTelemetry is loaded. */
  traces: TraceSettings | null;
}

export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

/**
 * On when OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set and OTEL_SDK_DISABLED is not
 * true. The exporter reads the endpoint and OTEL_EXPORTER_OTLP_HEADERS itself: headers (a vendor's API key) are never
 * part of the config.
 */
export interface TraceSettings {
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
  /** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG (the ratio of the traceidratio samplers). */
  sampler: { name: (typeof TRACE_SAMPLERS)[number]; ratio: number };
  /** OTEL_BSP_SCHEDULE_DELAY: milliseconds finished spans wait to be exported together. */
  exportDelayMs: number;
}

export interface AuditSettings {
  /** AUDIT_KEY (or _FILE): keys the audit log's hash chain (HMAC-SHA256). Not enumerable: never serialised with the config. */
  key: string;
  /** AUDIT_ANCHOR_FILE: each committed record's `seq hash` line is appended to it; null: no anchor file. */
  anchorFile: string | null;
}

export type ScreeningFailMode = 'closed' | 'open';

/** One chain's settings: NAME_* variables over the chain's preset (src/domain/chain-presets.ts). */
export interface ChainSettings {
  name: Chain;
  family: ChainFamily;
  /** NAME_ADAPTER: `simulated` (a network in this database) or `rpc` (a real node). */
  adapter: AdapterKind;
  rpcUrl: string | null;
  /** The USDC token contract (EVM, NAME_USDC_ADDRESS) or mint (SOLANA_USDC_MINT). */
  usdcAddress: string | null;
  /** NAME_TOKENS (default `usdc`), in the order listed: the tokens this chain pays out and holds (issue 40). */
  tokens: readonly TokenSettings[];
  /** NAME_BATCH_CONTRACT (EVM, rpc): the batch-transfer contract the treasury approved (decision 175); null: none. */
  batchContract: string | null;
  /** NAME_CHAIN_ID: what the node must report at start-up (EVM); null: not checked. */
  chainId: number | null;
  finality: FinalityRule;
  /** NAME_FEE_MODEL (EVM): `op-stack` estimates an OP-stack rollup's L1 data and operator fees (decision 189). */
  feeModel: FeeModel;
  /** Blocks until final under the `confirmations` rule (NAME_CONFIRMATIONS). */
  confirmations: number;
  /** Seconds between blocks and from inclusion to finality: the simulator's timings (NAME_BLOCK_SECONDS, NAME_FINAL_SECONDS). */
  blockSeconds: number;
  finalSeconds: number;
  /** `key`: treasuryKey signs; `pkcs11`: the key labelled pkcs11KeyLabel in the PKCS#11 token (treasuryKey null). */
  signer: SignerKind;
  pkcs11KeyLabel: string | null;
  /** Not enumerable (see withHiddenKey): never serialised with the config. */
  treasuryKey: string | null;
  nativeCurrency: NativeCurrency;
  nativeDecimals: number;
  /** `<CURRENCY>_USD_PRICE`: what a fee in the native currency costs in USD. */
  nativeUsdPrice: number;
  /** The simulator's fee per transfer, in the native currency's smallest unit. */
  simulatedFeeNative: bigint;
  /** Below this booked native balance (smallest units) the chain is degraded and an alert is raised (decision 28). */
  gasLowWater: bigint;
  /** Routing's fee (USD) and seconds to finality until a health sample measures them. */
  typicalFeeUsd: number;
  typicalConfirmationSeconds: number;
}

/** One token on one chain: its preset (src/domain/token.ts) under the chain's overrides. */
export interface TokenSettings {
  token: Token;
  /** Its ledger currency code: `USDC`, `USDT`, `PYUSD`. */
  currency: TokenCurrency;
  /** The contract (EVM) or mint (Solana); null on a simulated chain that was given none. */
  address: string | null;
  /** The variable that sets `address` (NAME_<TOKEN>_ADDRESS, SOLANA_<TOKEN>_MINT), for messages. */
  addressVariable: string;
  decimals: number;
  /** Solana: the program that owns the mint (PYUSD: Token-2022). */
  solanaProgram: SolanaTokenProgram;
  /** EVM: gas of one transfer to a new holder, which routing prices the token's route by. */
  transferGas: bigint;
}

export interface Pkcs11Settings {
  /** PKCS11_MODULE: path of the PKCS#11 library. */
  module: string;
  tokenLabel: string;
  /** Where the PIN was read from; the PIN itself is `pin`. */
  pinFile: string;
  timeoutSeconds: number;
  /** Not enumerable (see withHiddenPin): never serialised with the config. */
  pin: string;
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
/** Development only: a key everyone knows proves nothing, so production requires its own (decision 186). */
const DEV_AUDIT_KEY = 'stableroute-dev-audit-key';
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

function rate(env: Env, name: string, fallback = 0): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value < 0 || value > 1) {
    throw new ConfigError(name, `expected a share from 0 to 1, got "${raw}"`);
  }
  return value;
}

function traceSettings(env: Env): TraceSettings | null {
  const endpoint = present(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? present(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint === undefined || present(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return null;
  if (!/^https?:\/\/[^\s]+$/i.test(endpoint)) {
    const name = present(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') === undefined ? 'OTEL_EXPORTER_OTLP_ENDPOINT' : 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';
    throw new ConfigError(name, 'expected an http:// or https:// URL of an OTLP/HTTP collector (e.g. http://localhost:4318)');
  }
  // The exporter sends OTLP/HTTP with JSON bodies (what Jaeger, Tempo and the Collector take on port 4318); a protocol
  // asked for that it does not speak stops the start rather than exporting into the void.
  for (const variable of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = present(env, variable);
    if (protocol !== undefined && protocol !== 'http/json') throw new ConfigError(variable, `only http/json is exported, got "${protocol}"`);
  }
  const name = (present(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(TRACE_SAMPLERS as readonly string[]).includes(name)) {
    throw new ConfigError('OTEL_TRACES_SAMPLER', `expected one of ${TRACE_SAMPLERS.join(', ')}, got "${name}"`);
  }
  return {
    serviceName: present(env, 'OTEL_SERVICE_NAME') ?? 'stableroute',
    sampler: { name: name as TraceSettings['sampler']['name'], ratio: name.endsWith('traceidratio') ? rate(env, 'OTEL_TRACES_SAMPLER_ARG', 1) : 1 },
    exportDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', TRACE_EXPORT_DELAY_MS, 1, 60_000),
  };
}

/** A native token's USD price above this is a typo; below it, a fee in micro-dollars stays exact (decision 1). */
const USD_PRICE_MAX = 1_000_000_000;

function usdPrice(env: Env, name: string, fallback: number): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value > 0) || value > USD_PRICE_MAX) {
    throw new ConfigError(name, `expected a positive number of USD, at most ${USD_PRICE_MAX}, got "${raw}"`);
  }
  return value;
}

/** A USDC amount, or null (no limit) when unset. */
function usdLimit(env: Env, name: string): bigint | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  try {
    return parseBoundedUsdc(raw);
  } catch {
    throw new ConfigError(name, `expected a non-negative USD amount with at most 6 decimals, at most ${MAX_AMOUNT_USD}, got "${raw}"`);
  }
}

/** A native amount in whole units ("0.05" ETH) as smallest units (wei, lamports). */
function nativeAmount(env: Env, name: string, fallback: string, decimals: number): bigint {
  const raw = present(env, name) ?? fallback;
  try {
    return parseUnits(raw, decimals);
  } catch {
    throw new ConfigError(name, `expected a non-negative amount with at most ${decimals} decimals, got "${raw}"`);
  }
}

function onOff(env: Env, name: string, fallback: boolean): boolean {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  if (raw !== 'on' && raw !== 'off') throw new ConfigError(name, `expected "on" or "off", got "${raw}"`);
  return raw === 'on';
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

/**
 * DATABASE_URL: one host, or several as libpq takes them (decision 193). The service writes, so with several hosts its
 * sessions must land on the primary: target_session_attrs is read-write unless the URL says primary; a value that
 * could land on a standby is refused. The message never repeats the URL (it may hold a password).
 */
function writerDatabaseUrl(env: Env, name: string): string | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  const parsed = parseDatabaseUrl(raw);
  if (!parsed.ok) throw new ConfigError(name, parsed.problem);
  const { hosts, targetSessionAttrs } = parsed.url;
  if (targetSessionAttrs === null) return hosts.length > 1 ? `${raw}${raw.includes('?') ? '&' : '?'}target_session_attrs=read-write` : raw;
  if (targetSessionAttrs !== 'read-write' && targetSessionAttrs !== 'primary' && !(targetSessionAttrs === 'any' && hosts.length === 1)) {
    throw new ConfigError(name, `target_session_attrs=${targetSessionAttrs} could land on a standby, and the service writes: use read-write (the default with several hosts) or primary`);
  }
  return raw;
}

/**
 * DATABASE_READ_URL: any server of the same database, several hosts and every target_session_attrs allowed (e.g.
 * standbys first, then the primary, with prefer-standby). It needs DATABASE_URL: the embedded server has no standby.
 */
function readerDatabaseUrl(env: Env, name: string): string | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  const parsed = parseDatabaseUrl(raw);
  if (!parsed.ok) throw new ConfigError(name, parsed.problem);
  if (present(env, 'DATABASE_URL') === undefined) throw new ConfigError(name, 'needs DATABASE_URL (the embedded PostgreSQL has no standby)');
  return raw;
}

/** A webhook URL as onboarding accepts it (src/domain/webhook-url.ts); the message never repeats the value. */
function webhookUrl(env: Env, name: string): string | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  const parsed = parseWebhookUrl(raw);
  if (!parsed.ok) throw new ConfigError(name, parsed.problem);
  return raw;
}

/** Comma-separated host names, addresses and CIDR ranges (src/webhook-client/destination-guard.ts). */
function allowedWebhookHosts(env: Env, name: string): string[] {
  const entries = (present(env, name) ?? '').split(',').map((e) => e.trim()).filter((e) => e !== '');
  try {
    parseAllowList(entries);
  } catch (error) {
    throw new ConfigError(name, (error as Error).message);
  }
  return entries;
}

/** A comma-separated list of host names or IP addresses (no ports, no schemes), lower-cased; null when unset. */
function hostList(env: Env, name: string): string[] | null {
  const raw = present(env, name);
  if (raw === undefined) return null;
  const hosts = raw.split(',').map((h) => h.trim().toLowerCase()).filter((h) => h !== '');
  for (const host of hosts) {
    if (!/^(\[[0-9a-f:.]+\]|[0-9a-f:]*:[0-9a-f:.]*|[a-z0-9_.-]+)$/.test(host)) {
      throw new ConfigError(name, `expected comma-separated host names or IP addresses, got "${host}"`);
    }
  }
  return hosts;
}

function screeningFail(env: Env, production: boolean): ScreeningFailMode {
  const raw = present(env, 'SCREENING_FAIL') ?? (production ? 'closed' : 'open');
  if (raw !== 'closed' && raw !== 'open') throw new ConfigError('SCREENING_FAIL', `expected "closed" or "open", got "${raw}"`);
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
 * A settings section whose treasury key is a non-enumerable property: code reads `config.chains.solana.treasuryKey` as
 * usual, but JSON.stringify, pino, util.inspect and object spread never see it, so logging or returning the config
 * (or anything that holds it, such as the app context) cannot leak the key. A spread copy of a section has no key.
 */
function withHiddenKey<T extends object>(section: T, treasuryKey: string | null): T & { treasuryKey: string | null } {
  return Object.defineProperty(section, 'treasuryKey', { value: treasuryKey, enumerable: false }) as T & {
    treasuryKey: string | null;
  };
}

function signerKind(env: Env, name: string): SignerKind {
  const raw = present(env, name) ?? 'key';
  if (!(SIGNER_KINDS as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `expected ${SIGNER_KINDS.map((k) => `"${k}"`).join(' or ')}, got "${raw}"`);
  }
  return raw as SignerKind;
}

/**
 * With a pkcs11 signer the treasury key lives in the token: a key in the environment (or a key file named there)
 * would be a second copy outside it, so its presence stops start-up. Neither the value nor the file is read.
 */
function refuseTreasuryKey(env: Env, name: string, signerVariable: string): null {
  for (const variable of [name, `${name}_FILE`]) {
    if (present(env, variable) !== undefined) {
      throw new ConfigError(variable, `must not be set with ${signerVariable}=pkcs11: the treasury key lives in the PKCS#11 token`);
    }
  }
  return null;
}

function pkcs11Settings(env: Env, why: string): Pkcs11Settings {
  const module = required(env, 'PKCS11_MODULE', why);
  if (!existsSync(module)) {
    throw new ConfigError(
      'PKCS11_MODULE',
      `no PKCS#11 library at ${module} (for SoftHSM2 on Debian: apt-get install softhsm2, then /usr/lib/softhsm/libsofthsm2.so)`,
    );
  }
  const tokenLabel = required(env, 'PKCS11_TOKEN_LABEL', why);
  if (Buffer.byteLength(tokenLabel) > 32) throw new ConfigError('PKCS11_TOKEN_LABEL', 'a token label has at most 32 bytes');
  const pinFile = required(env, 'PKCS11_PIN_FILE', why);
  let pin: string;
  try {
    pin = readFileSync(pinFile, 'utf8').trim();
    if (!pin) throw new Error('empty');
  } catch (error) {
    // The message names the file, never its content.
    throw new ConfigError('PKCS11_PIN_FILE', `cannot read a PIN from ${pinFile} (${(error as NodeJS.ErrnoException).code ?? 'empty file'})`);
  }
  return withHiddenPin(
    { module, tokenLabel, pinFile, timeoutSeconds: seconds(env, 'PKCS11_TIMEOUT_SECONDS', 5, 0.05) },
    pin,
  );
}

/** Like withHiddenKey: the PIN is readable as `settings.pin`, invisible to JSON.stringify, pino, inspect and spread. */
function withHiddenPin(settings: Omit<Pkcs11Settings, 'pin'>, pin: string): Pkcs11Settings {
  return Object.defineProperty(settings, 'pin', { value: pin, enumerable: false }) as Pkcs11Settings;
}

/** Each configured chain's NAME_TOKENS, as the treasury's books and reconciliation take it. */
export function tokensOfConfig(config: Pick<Config, 'chains'>): (chain: Chain) => Token[] {
  return (chain) => config.chains[chain]?.tokens.map((t) => t.token) ?? [];
}

/** NAME in variable names: `base` -> `BASE`. */
export function envName(chain: Chain): string {
  return chain.toUpperCase();
}

function chainList(env: Env): Chain[] {
  const raw = present(env, 'CHAINS');
  if (raw === undefined) return [...DEFAULT_CHAINS];
  const names = parseChainList(raw);
  if ('problem' in names) throw new ConfigError('CHAINS', names.problem);
  return names;
}

/**
 * One chain's settings: each NAME_* variable, else the preset's default. A chain without a preset needs every
 * setting a preset would give, so nothing about a chain stableroute does not know is guessed.
 */
function chainSettings(env: Env, name: Chain): ChainSettings {
  const prefix = envName(name);
  const preset = CHAIN_PRESETS[name];
  const family = familyOf(name);
  const setting = (suffix: string) => `${prefix}_${suffix}`;
  const withoutPreset = (suffix: string): never => {
    throw new ConfigError(setting(suffix), `is required for ${name}, which has no preset (presets: ${Object.keys(CHAIN_PRESETS).join(', ')})`);
  };
  const adapterKind = adapter(env, setting('ADAPTER'));
  const signer = signerKind(env, setting('SIGNER'));
  const rpc = adapterKind === 'rpc';
  const pkcs11 = rpc && signer === 'pkcs11';
  const usdcVariable = tokenAddressVariable(prefix, family, 'usdc');
  const nativeCurrency = present(env, setting('NATIVE_CURRENCY'))?.toUpperCase() ?? preset?.nativeCurrency ?? withoutPreset('NATIVE_CURRENCY');
  if (!/^[A-Z][A-Z0-9]{1,9}$/.test(nativeCurrency) || nativeCurrency === 'USDC') {
    throw new ConfigError(setting('NATIVE_CURRENCY'), `expected a currency symbol such as ETH or POL, got "${nativeCurrency}"`);
  }
  const priceVariable = `${nativeCurrency}_USD_PRICE`;
  const defaultPrice = DEFAULT_NATIVE_USD_PRICES[nativeCurrency];
  if (defaultPrice === undefined && present(env, priceVariable) === undefined) {
    throw new ConfigError(priceVariable, `is required: ${name} pays its fees in ${nativeCurrency}`);
  }
  const nativeDecimals = NATIVE_DECIMALS[family];
  const finality = present(env, setting('FINALITY')) ?? preset?.finality ?? withoutPreset('FINALITY');
  if (!(FINALITY_RULES as readonly string[]).includes(finality) || (family === 'solana' && finality !== 'finalized')) {
    throw new ConfigError(setting('FINALITY'), `expected ${family === 'solana' ? '"finalized"' : FINALITY_RULES.map((r) => `"${r}"`).join(', ')}, got "${finality}"`);
  }
  const chainIdRaw = present(env, setting('CHAIN_ID'));
  const presetChainId = preset && (!preset.chainIdInProductionOnly || env.NODE_ENV === 'production') ? preset.chainId : null;
  const chainId = family === 'solana' ? null : chainIdRaw !== undefined ? integer(env, setting('CHAIN_ID'), 0, 1, Number.MAX_SAFE_INTEGER) : (preset ? presetChainId : withoutPreset('CHAIN_ID'));
  const blockSeconds = seconds(env, setting('BLOCK_SECONDS'), preset?.blockSeconds ?? 2, 0.05);
  const finalSeconds = seconds(env, setting('FINAL_SECONDS'), preset?.finalSeconds ?? blockSeconds, 0.05);
  const nativeUsdPrice = usdPrice(env, priceVariable, defaultPrice ?? 0);
  // A chain without a preset: 63k gas at 1 gwei, until NAME_* settings say more.
  const simulatedFeeNative = preset?.transferFeeNative ?? 63_000n * 10n ** 9n;
  return withHiddenKey(
    {
      name,
      family,
      adapter: adapterKind,
      rpcUrl: rpc ? required(env, setting('RPC_URL'), `with ${setting('ADAPTER')}=rpc`) : url(env, setting('RPC_URL')),
      usdcAddress: rpc ? required(env, usdcVariable, `with ${setting('ADAPTER')}=rpc`) : (present(env, usdcVariable) ?? null),
      tokens: tokenSettings(env, name, family, rpc),
      batchContract: batchContract(env, setting('BATCH_CONTRACT'), family, rpc),
      chainId,
      finality: finality as FinalityRule,
      feeModel: feeModel(env, setting('FEE_MODEL'), family, preset?.feeModel ?? 'gas'),
      confirmations: integer(env, setting('CONFIRMATIONS'), preset?.confirmations ?? 1, 1, 1000),
      blockSeconds,
      finalSeconds,
      signer,
      pkcs11KeyLabel: pkcs11 ? required(env, setting('PKCS11_KEY_LABEL'), `with ${setting('SIGNER')}=pkcs11`) : (present(env, setting('PKCS11_KEY_LABEL')) ?? null),
      nativeCurrency,
      nativeDecimals,
      nativeUsdPrice,
      simulatedFeeNative,
      gasLowWater: nativeAmount(env, setting('GAS_LOW_WATER'), preset?.gasLowWater ?? '0', nativeDecimals),
      typicalFeeUsd: preset?.typicalFeeUsd ?? nativeToUsd(simulatedFeeNative, nativeDecimals, nativeUsdPrice),
      typicalConfirmationSeconds: preset?.typicalConfirmationSeconds ?? finalSeconds + blockSeconds,
    },
    signer === 'pkcs11' ? refuseTreasuryKey(env, setting('TREASURY_KEY'), setting('SIGNER')) : requiredSecret(env, setting('TREASURY_KEY'), rpc, `with ${setting('ADAPTER')}=rpc`),
  );
}

/**
 * NAME_TOKENS (default `usdc`) and each listed token's contract or mint. With a node, a token's address is its
 * variable, else in production its mainnet preset (decision 235); USDC's variable stays required with a node, as before.
 */
function tokenSettings(env: Env, name: Chain, family: ChainFamily, rpc: boolean): TokenSettings[] {
  const prefix = envName(name);
  const variable = `${prefix}_TOKENS`;
  const raw = present(env, variable);
  const tokens = raw === undefined ? [DEFAULT_TOKEN] : parseTokenList(raw);
  if ('problem' in tokens) throw new ConfigError(variable, tokens.problem);
  return tokens.map((token) => {
    const preset = TOKEN_PRESETS[token];
    const addressVariable = tokenAddressVariable(prefix, family, token);
    const given = present(env, addressVariable);
    const mainnet = env.NODE_ENV === 'production' && token !== 'usdc' ? CHAIN_PRESETS[name]?.tokens[token] : undefined;
    const address = given ?? mainnet ?? null;
    if (rpc && address === null) {
      throw new ConfigError(addressVariable, `is required with ${prefix}_ADAPTER=rpc and ${token} in ${variable}${CHAIN_PRESETS[name]?.tokens[token] ? ' (outside production: its mainnet preset is used only with NODE_ENV=production)' : ` (no preset for ${token} on ${name})`}`);
    }
    // USDC's variable keeps its checks where they were (the adapter's, at start-up).
    if (address !== null && token !== 'usdc' && !(family === 'evm' ? isWellFormedEthereumAddress(address) : isWellFormedSolanaAddress(address))) {
      const expected = family === 'evm' ? 'a token contract address (0x and 40 hex digits, EIP-55 when mixed case)' : 'a mint address (base58, 32 bytes)';
      throw new ConfigError(addressVariable, `expected ${expected}, got "${address}"`);
    }
    return { token, currency: currencyOf(token), address, addressVariable, decimals: preset.decimals, solanaProgram: preset.solanaProgram, transferGas: preset.evmTransferGas };
  });
}

/** NAME_BATCH_CONTRACT: an EVM address (EIP-55 checksum when mixed case), on an EVM chain that talks to a node. */
function batchContract(env: Env, variable: string, family: ChainFamily, rpc: boolean): string | null {
  const value = present(env, variable);
  if (value === undefined) return null;
  if (family !== 'evm' || !rpc) throw new ConfigError(variable, 'is read only for an EVM chain with a node (its ADAPTER=rpc)');
  if (!isWellFormedEthereumAddress(value)) throw new ConfigError(variable, `expected an EVM contract address (0x and 40 hex digits, EIP-55 when mixed case), got "${value}"`);
  return value;
}

/** NAME_FEE_MODEL: how an EVM chain charges (`gas` or `op-stack`); Solana has its own fees. */
function feeModel(env: Env, variable: string, family: ChainFamily, fallback: FeeModel): FeeModel {
  const value = present(env, variable);
  if (value === undefined) return fallback;
  if (family !== 'evm') throw new ConfigError(variable, 'is read only for an EVM chain');
  if (!(FEE_MODELS as readonly string[]).includes(value)) throw new ConfigError(variable, `expected ${FEE_MODELS.map((m) => `"${m}"`).join(' or ')}, got "${value}"`);
  return value as FeeModel;
}

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const chainNames = chainList(env);
  const chains = Object.fromEntries(chainNames.map((name) => [name, chainSettings(env, name)]));
  const pkcs11Chain = chainNames.find((name) => chains[name]!.adapter === 'rpc' && chains[name]!.signer === 'pkcs11');
  if (present(env, 'PKCS11_PIN') !== undefined) {
    throw new ConfigError('PKCS11_PIN', 'is not read: put the PIN in a file and name it with PKCS11_PIN_FILE');
  }
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
  const logFormat = present(env, 'LOG_FORMAT') ?? null;
  if (logFormat !== null && !(LOG_FORMATS as readonly string[]).includes(logFormat)) {
    throw new ConfigError('LOG_FORMAT', `expected ${LOG_FORMATS.map((f) => `"${f}"`).join(' or ')}, got "${logFormat}"`);
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
  const adminToken = secret(env, 'ADMIN_TOKEN');
  const operatorWebhookSecret = secret(env, 'OPERATOR_WEBHOOK_SECRET');
  const auditKey = requiredSecret(env, 'AUDIT_KEY', production, 'when NODE_ENV=production') ?? DEV_AUDIT_KEY;
  if (production) {
    // A guessable secret forges webhooks, brute-forces key hashes, opens the admin API or lets the audit log be
    // rewritten: refuse to start with it.
    const secrets = [['API_KEY_SALT', apiKeySalt], ['WEBHOOK_SIGNING_SECRET', webhookSigningSecret], ['ADMIN_TOKEN', adminToken], ['OPERATOR_WEBHOOK_SECRET', operatorWebhookSecret], ['AUDIT_KEY', auditKey]] as const;
    for (const [name, value] of secrets) {
      const problem = value === undefined ? null : weakSecretProblem(value);
      if (problem !== null) throw new ConfigError(name, `${problem} (NODE_ENV=production)`);
    }
  }
  const screeningUrl = url(env, 'SCREENING_URL');
  const screeningSecret = requiredSecret(env, 'SCREENING_SECRET', screeningUrl !== null, 'with SCREENING_URL (it signs the screening requests)');
  if (screeningSecret !== null) {
    const problem = production ? weakSecretProblem(screeningSecret) : null;
    if (problem !== null) throw new ConfigError('SCREENING_SECRET', `${problem} (NODE_ENV=production)`);
    if (isStandardSecret(screeningSecret)) {
      try {
        standardKeyOf(screeningSecret);
      } catch (error) {
        if (!(error instanceof WebhookSecretError)) throw error;
        throw new ConfigError('SCREENING_SECRET', error.message);
      }
    }
  }
  const adminExposeOpenEndpoints = onOff(env, 'ADMIN_EXPOSE_OPEN_ENDPOINTS', false);
  if (production && adminPortRaw !== undefined && !adminExposeOpenEndpoints) {
    // The admin listener answers every peer that reaches it (its address is the operator's internal network): bound
    // to every interface, or to the public listener's own, it would answer the world (decision 96).
    const adminHost = present(env, 'ADMIN_HOST') ?? '127.0.0.1';
    const host = present(env, 'HOST') ?? '0.0.0.0';
    if (isWildcardAddress(adminHost) || (sameBindAddress(adminHost, host) && !isLoopbackAddress(host))) {
      throw new ConfigError(
        'ADMIN_HOST',
        `${adminHost} would serve the admin endpoints that need no credentials on a public interface (NODE_ENV=production): ` +
          'bind ADMIN_HOST to an internal or loopback address, or set ADMIN_EXPOSE_OPEN_ENDPOINTS=on to expose them',
      );
    }
  }
  if (operatorWebhookSecret !== undefined && isStandardSecret(operatorWebhookSecret)) {
    try {
      standardKeyOf(operatorWebhookSecret);
    } catch (error) {
      if (!(error instanceof WebhookSecretError)) throw error;
      throw new ConfigError('OPERATOR_WEBHOOK_SECRET', error.message);
    }
  }
  if (webhookSigningSecret !== undefined && isStandardSecret(webhookSigningSecret)) {
    // A whsec_ secret keys webhook-signature with its decoded bytes, so it must decode the way receivers' libraries do.
    try {
      standardKeyOf(webhookSigningSecret);
    } catch (error) {
      if (!(error instanceof WebhookSecretError)) throw error;
      throw new ConfigError('WEBHOOK_SIGNING_SECRET', `${error.message}; \`stableroute webhooks secret\` prints a valid one`);
    }
  }

  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    host: present(env, 'HOST') ?? '0.0.0.0',
    adminPort: adminPortRaw === undefined ? null : integer(env, 'ADMIN_PORT', 0, 0, 65535),
    adminHost: present(env, 'ADMIN_HOST') ?? '127.0.0.1',
    adminAllowedHosts: hostList(env, 'ADMIN_ALLOWED_HOSTS'),
    adminToken: adminToken ?? null,
    adminExposeOpenEndpoints,
    withdrawalApprovalAboveMicros: usdLimit(env, 'WITHDRAWAL_APPROVAL_ABOVE_USD'),
    withdrawalApprovalWindowSeconds: seconds(env, 'WITHDRAWAL_APPROVAL_WINDOW_SECONDS', 86_400),
    approvalsRequireSecondOperator: onOff(env, 'APPROVALS_REQUIRE_SECOND_OPERATOR', production),
    approvalsAllowBreakGlass: onOff(env, 'APPROVALS_ALLOW_BREAK_GLASS', false),
    databaseUrl: writerDatabaseUrl(env, 'DATABASE_URL'),
    databaseReadUrl: readerDatabaseUrl(env, 'DATABASE_READ_URL'),
    dataDir: present(env, 'DATA_DIR') ?? './.data',
    production,
    apiKeySalt: apiKeySalt ?? DEV_API_KEY_SALT,
    webhookSigningSecret: webhookSigningSecret ?? DEV_WEBHOOK_SECRET,
    devMerchantWebhookUrl: webhookUrl(env, 'DEV_MERCHANT_WEBHOOK_URL'),
    webhookSsrfGuard: onOff(env, 'WEBHOOK_SSRF_GUARD', production),
    webhookAllowedHosts: allowedWebhookHosts(env, 'WEBHOOK_ALLOWED_HOSTS'),
    webhookSecretOverlapSeconds: seconds(env, 'WEBHOOK_SECRET_OVERLAP_SECONDS', 86_400),
    quoteTtlSeconds: seconds(env, 'QUOTE_TTL_SECONDS', 300, 0.001),
    confirmationPollSeconds: seconds(env, 'CONFIRMATION_POLL_SECONDS', 15, 0.05),
    confirmationHeadPollSeconds: seconds(env, 'CONFIRMATION_HEAD_POLL_SECONDS', 1, 0.05),
    stuckAfterSeconds: seconds(env, 'STUCK_AFTER_SECONDS', 600),
    webhookPollSeconds: seconds(env, 'WEBHOOK_POLL_SECONDS', 5, 0.05),
    webhookRetryDelaySeconds: seconds(env, 'WEBHOOK_RETRY_DELAY_SECONDS', 5),
    webhookTimeoutSeconds: seconds(env, 'WEBHOOK_TIMEOUT_SECONDS', 10, 0.05),
    healthCollectSeconds: seconds(env, 'HEALTH_COLLECT_SECONDS', 15, 0.05),
    executionRetryDelaySeconds: seconds(env, 'EXECUTION_RETRY_DELAY_SECONDS', 5),
    executionJobTimeoutSeconds: seconds(env, 'EXECUTION_JOB_TIMEOUT_SECONDS', 60, 1),
    executionLeaseSeconds: seconds(env, 'EXECUTION_LEASE_SECONDS', 10, 0.5),
    depositPollSeconds: seconds(env, 'DEPOSIT_POLL_SECONDS', 5, 0.05),
    booksCheckSeconds: seconds(env, 'BOOKS_CHECK_SECONDS', 5, 0.05),
    simTreasuryUsdcMicros,
    simConfirmSeconds: present(env, 'SIM_CONFIRM_SECONDS') === undefined ? null : seconds(env, 'SIM_CONFIRM_SECONDS', 0),
    simFailureRate: rate(env, 'SIM_FAILURE_RATE'),
    simStuckRate: rate(env, 'SIM_STUCK_RATE'),
    simSeed: present(env, 'SIM_SEED') ?? 'stableroute',
    logLevel,
    logFormat: logFormat as LogFormat | null,
    chainNames,
    chains,
    pkcs11: pkcs11Chain === undefined ? null : pkcs11Settings(env, `with ${envName(pkcs11Chain)}_SIGNER=pkcs11`),
    rpcTimeoutSeconds: seconds(env, 'RPC_TIMEOUT_SECONDS', 10, 0.05),
    policy: {
      maxPaymentMicros: usdLimit(env, 'POLICY_MAX_PAYMENT_USD'),
      dailyLimitMicros: usdLimit(env, 'POLICY_DAILY_LIMIT_USD'),
      approvalAboveMicros: usdLimit(env, 'POLICY_APPROVAL_ABOVE_USD'),
      approvalAbovePerDayMicros: usdLimit(env, 'POLICY_APPROVAL_ABOVE_USD_PER_DAY'),
      allowlist: onOff(env, 'POLICY_ALLOWLIST', false),
      addressCoolingOffSeconds: seconds(env, 'POLICY_ADDRESS_COOLING_OFF_SECONDS', 0),
    },
    rateLimitPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000),
    adminRateLimitPerMinute: integer(env, 'ADMIN_RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000),
    healthRateLimitPerMinute: integer(env, 'HEALTH_RATE_LIMIT_PER_MINUTE', 1200, 0, 1_000_000),
    apiKeyFailureRateLimitPerMinute: integer(env, 'API_KEY_FAILURE_RATE_LIMIT_PER_MINUTE', 60, 0, 1_000_000),
    reconcileIntervalSeconds: seconds(env, 'RECONCILE_INTERVAL_SECONDS', 60, 1),
    reconcileSurplusGraceSeconds: seconds(env, 'RECONCILE_SURPLUS_GRACE_SECONDS', 300),
    operatorWebhookUrl: webhookUrl(env, 'OPERATOR_WEBHOOK_URL'),
    operatorWebhookSecret: operatorWebhookSecret ?? webhookSigningSecret ?? DEV_WEBHOOK_SECRET,
    screeningListFile: present(env, 'SCREENING_LIST_FILE') ?? null,
    screeningListMaxDropPercent: integer(env, 'SCREENING_LIST_MAX_DROP_PERCENT', 10, 0, 100),
    screeningUrl,
    screeningSecret,
    screeningTimeoutSeconds: seconds(env, 'SCREENING_TIMEOUT_SECONDS', 2, 0.05),
    screeningFail: screeningFail(env, production),
    traces: traceSettings(env),
    audit: Object.defineProperty({ anchorFile: present(env, 'AUDIT_ANCHOR_FILE') ?? null }, 'key', { value: auditKey, enumerable: false }) as AuditSettings,
  };
}
