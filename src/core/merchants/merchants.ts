// Merchants and authentication. Keys are shown once; only HMAC-SHA256(API_KEY_SALT, key) is stored (api-keys.ts).
import type { Config } from '../../config.js';
import type { Pool, Queryable } from '../../db/pool.js';
import { audited, type AuditEntry } from '../operators/audit.js';
import { GroupCommit } from '../../db/group-commit.js';
import { readKeyOwners, type KeyOwner } from '../../db/queries/api-keys.js';
import { insertMerchant, upsertTestMerchant } from '../../db/queries/merchants.js';
import { AppError } from '../../domain/errors.js';
import { merchantNameProblem } from '../../domain/merchant.js';
import { parseWebhookUrl } from '../../domain/webhook-url.js';
import { newId } from '../../ids.js';
import { destinationPolicy, destinationProblem, type DestinationPolicy } from '../../webhook-client/destination-guard.js';
import { hashApiKey, issueApiKey } from './api-keys.js';
import { issueWebhookSecret } from '../webhooks/secrets.js';
import { KEY_LOOKUP_BATCH_MAX } from '../../bounds.js';

export const TEST_MERCHANT_ID = 'mer_test';

export interface Merchant {
  id: string;
  name: string;
  webhook_url: string | null;
}

/** A merchant as one request authenticated it: which key, when that key was last recorded as used, its rate limit. */
export interface Authenticated extends Merchant {
  /** null for the development test merchant reached without an issued key. */
  keyId: string | null;
  keyLastUsedAt: Date | null;
  /** The merchant's own requests-per-minute limit, null to follow RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute: number | null;
}

export interface MerchantInput {
  name: string;
  webhookUrl: string | null;
}

/**
 * Why an onboarding input is refused (a sentence naming the option), or null. With a destination policy, a URL that
 * delivery would refuse without even resolving it (plain http in production, a private or loopback address) is
 * refused now rather than on the first event.
 */
export function merchantInputProblem(input: MerchantInput, policy?: DestinationPolicy): string | null {
  const nameProblem = merchantNameProblem(input.name);
  if (nameProblem !== null) return `--name ${nameProblem}`;
  if (input.webhookUrl !== null) {
    const parsed = parseWebhookUrl(input.webhookUrl);
    if (!parsed.ok) return `--webhook-url ${parsed.problem}`;
    const destination = policy === undefined ? null : destinationProblem(parsed.url, policy);
    if (destination !== null) return `--webhook-url ${destination}`;
  }
  return null;
}

/**
 * Onboards a merchant: its first API key (only the hash is stored) and its own webhook signing secret (sealed), both
 * returned this once (decision 67).
 */
export async function createMerchant(
  pool: Pool,
  config: Pick<Config, 'apiKeySalt' | 'production' | 'webhookSsrfGuard' | 'webhookAllowedHosts' | 'audit'>,
  input: MerchantInput,
  at: Date,
  audit: AuditEntry,
): Promise<{ merchant: Merchant; apiKey: string; webhookSecret: string }> {
  const problem = merchantInputProblem(input, destinationPolicy(config));
  if (problem !== null) throw new AppError('INVALID_REQUEST', problem);
  const merchant: Merchant = { id: newId('mer'), name: input.name, webhook_url: input.webhookUrl };
  // One transaction: the merchant, its first API key (decision 91) and its webhook secret (decision 67).
  return audited({ pool, config }, { ...audit, targets: [merchant.id] }, at, async (tx) => {
    await insertMerchant(tx, { ...merchant, at });
    const { apiKey } = await issueApiKey(tx, config, merchant.id, at);
    const webhookSecret = await issueWebhookSecret(tx, config, merchant.id, at);
    return { merchant, apiKey, webhookSecret };
  });
}

/** The built-in test merchant of development mode; its webhook_url follows DEV_MERCHANT_WEBHOOK_URL at each start. */
export async function ensureTestMerchant(db: Queryable, webhookUrl: string | null, at: Date): Promise<void> {
  await upsertTestMerchant(db, TEST_MERCHANT_ID, webhookUrl, at);
}

function authenticated(owner: KeyOwner): Authenticated {
  return {
    id: owner.merchant_id,
    name: owner.name,
    webhook_url: owner.webhook_url,
    keyId: owner.key_id,
    keyLastUsedAt: owner.last_used_at,
    rateLimitPerMinute: owner.rate_limit_per_minute,
  };
}

interface KeyLookup {
  hash: string;
  /** An unknown key falls back to the development test merchant. */
  keyless: boolean;
}

export type KeyLookups = GroupCommit<KeyLookup, KeyOwner | null>;

/**
 * The key lookups of a process, grouped: the requests that arrive while one lookup query runs share the next (decision
 * 136). Each request's lookup still starts after it arrived, so a key revoked before a request is refused by it. Held
 * by the context (group-commits.ts).
 */
export function createKeyLookups(pool: Pool): KeyLookups {
  return new GroupCommit<KeyLookup, KeyOwner | null>(async (lookups) => {
    const hashes = [...new Set(lookups.map((l) => l.hash))];
    const { owners, keyless } = await readKeyOwners(pool, hashes, lookups.some((l) => l.keyless) ? TEST_MERCHANT_ID : null);
    return lookups.map((l) => ({ ok: true as const, value: owners.get(l.hash) ?? (l.keyless ? keyless : null) }));
  }, KEY_LOOKUP_BATCH_MAX);
}

/**
 * Resolves an API key to a merchant. Production: the key's HMAC must name an active key (looked up by the HMAC,
 * never by the key, so the lookup's timing says nothing about a stored key). Development: an issued key still
 * resolves to its merchant, and a revoked one is refused as in production; any other key is the test merchant. A
 * missing or empty key never authenticates.
 */
export async function authenticate(
  keyLookups: KeyLookups,
  config: Pick<Config, 'apiKeySalt' | 'production'>,
  apiKey: string | undefined,
): Promise<Authenticated | null> {
  if (!apiKey) return null;
  const owner = await keyLookups.submit({ hash: hashApiKey(config.apiKeySalt, apiKey), keyless: !config.production });
  if (!owner) return null;
  return owner.key_id !== null && owner.revoked_at !== null ? null : authenticated(owner);
}
