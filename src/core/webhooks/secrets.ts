// Per-merchant webhook signing secrets (decision 67): issued at onboarding and shown once, sealed at rest, rotated
// with an overlap during which both the new and the previous secret sign every delivery. The built-in test merchant,
// and merchants onboarded before per-merchant secrets (until their first rotation), sign with WEBHOOK_SIGNING_SECRET.
import { addSeconds } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Pool, Queryable } from '../../db/pool.js';
import { audited, type AuditConfig, type AuditEntry } from '../operators/audit.js';
import { lockMerchant } from '../../db/queries/merchants.js';
import { insertWebhookSecret, markCurrentSecretRetiring, updateOverlappingSecrets, readSigningSecrets } from '../../db/queries/webhook-secrets.js';
import { AppError } from '../../domain/errors.js';
import { generateWebhookSecret, type SigningSecret } from '../../webhook-client/secret.js';
import { openSecret, sealingKey, sealSecret } from '../../webhook-client/secret-box.js';

type SecretConfig = Pick<Config, 'apiKeySalt' | 'webhookSigningSecret'>;

export interface RotationResult {
  merchant_id: string;
  /** The new current secret, shown this once. */
  webhook_secret: string;
  /** Until when the previous secret still signs deliveries; null when the overlap was 0. */
  previous_valid_until: string | null;
}

/** Issues a new merchant's first secret on the onboarding transaction. Returns the plaintext, to be shown once. */
export async function issueWebhookSecret(tx: Queryable, config: Pick<Config, 'apiKeySalt'>, merchantId: string, at: Date): Promise<string> {
  const secret = generateWebhookSecret();
  await insertWebhookSecret(tx, { merchantId, sealed: sealSecret(sealingKey(config.apiKeySalt), secret, merchantId), at, retiresAt: null });
  return secret;
}

/**
 * The secrets a delivery of `merchantId` at `at` is signed with, the current one first. Throws SealedSecretError
 * when a sealed secret does not open (API_KEY_SALT changed).
 */
export async function signingSecretsOf(db: Queryable, config: SecretConfig, merchantId: string, at: Date): Promise<[SigningSecret, ...SigningSecret[]]> {
  const configured: SigningSecret = { secret: config.webhookSigningSecret, issued: false };
  const rows = await readSigningSecrets(db, merchantId, at);
  if (!rows.any || rows.active.length === 0) return [configured];
  const key = sealingKey(config.apiKeySalt);
  const [first, ...rest] = rows.active.map((row) =>
    row.sealed === null ? configured : { secret: openSecret(key, row.sealed, merchantId), issued: true },
  );
  return [first!, ...rest];
}

/**
 * A new current secret; the previous one (for a merchant without issued secrets, WEBHOOK_SIGNING_SECRET) keeps
 * signing for `overlapSeconds`, so the merchant can switch its receiver without missing a delivery.
 */
export async function rotateWebhookSecret(
  pool: Pool,
  config: Pick<Config, 'apiKeySalt' | 'audit'>,
  merchantId: string,
  at: Date,
  overlapSeconds: number,
  audit: AuditEntry,
): Promise<RotationResult> {
  return audited({ pool, config }, audit, at, async (tx) => {
    const merchant = await lockMerchant(tx, merchantId);
    if (merchant === null) throw new AppError('NOT_FOUND', `merchant ${merchantId} was not found`);
    if (merchant.isTest) {
      throw new AppError('INVALID_STATE', 'the test merchant signs with WEBHOOK_SIGNING_SECRET; change that setting instead');
    }
    const retiresAt = addSeconds(at, overlapSeconds);
    const existing = await readSigningSecrets(tx, merchantId, at);
    // Onboarded before per-merchant secrets: the configured secret is its previous one for the overlap.
    if (!existing.any) await insertWebhookSecret(tx, { merchantId, sealed: null, at, retiresAt });
    else await markCurrentSecretRetiring(tx, merchantId, retiresAt);
    const secret = await issueWebhookSecret(tx, config, merchantId, at);
    return { merchant_id: merchantId, webhook_secret: secret, previous_valid_until: overlapSeconds > 0 ? retiresAt.toISOString() : null };
  });
}

/** Ends every running overlap now: only the current secret signs from here on. */
export async function endWebhookSecretOverlap(pool: Pool, config: AuditConfig, merchantId: string, at: Date, audit: AuditEntry): Promise<{ merchant_id: string; retired_secrets: number }> {
  return audited({ pool, config }, audit, at, async (tx) => {
    if ((await lockMerchant(tx, merchantId)) === null) throw new AppError('NOT_FOUND', `merchant ${merchantId} was not found`);
    return { merchant_id: merchantId, retired_secrets: await updateOverlappingSecrets(tx, merchantId, at) };
  });
}
