// Merchant policy overrides (merchant_policies) and the volume a daily limit is checked against.
import type { PaymentStatus } from '../../domain/payment-intent.js';
import type { PolicyOverrides } from '../../domain/spending-policy.js';
import type { Queryable } from '../pool.js';

/** A merchant's stored overrides; `rateLimitPerMinute` undefined inherits the service default, 0 is no limit. */
export interface StoredPolicy {
  overrides: PolicyOverrides;
  rateLimitPerMinute?: number;
}

interface RawPolicy {
  max_payment_set: boolean | null;
  max_payment_micros: string | null;
  daily_limit_set: boolean | null;
  daily_limit_micros: string | null;
  approval_above_set: boolean | null;
  approval_above_micros: string | null;
  approval_above_per_day_set: boolean | null;
  approval_above_per_day_micros: string | null;
  allowlist: boolean | null;
  rate_limit_per_minute: number | null;
}

const limit = (set: boolean | null, micros: string | null): bigint | null | undefined =>
  set ? (micros === null ? null : BigInt(micros)) : undefined;

function toStored(r: RawPolicy): StoredPolicy {
  const overrides: PolicyOverrides = {};
  const max = limit(r.max_payment_set, r.max_payment_micros);
  const daily = limit(r.daily_limit_set, r.daily_limit_micros);
  const approval = limit(r.approval_above_set, r.approval_above_micros);
  const perDay = limit(r.approval_above_per_day_set, r.approval_above_per_day_micros);
  if (max !== undefined) overrides.maxPaymentMicros = max;
  if (daily !== undefined) overrides.dailyLimitMicros = daily;
  if (approval !== undefined) overrides.approvalAboveMicros = approval;
  if (perDay !== undefined) overrides.approvalAbovePerDayMicros = perDay;
  if (r.allowlist !== null) overrides.allowlist = r.allowlist;
  return { overrides, ...(r.rate_limit_per_minute === null ? {} : { rateLimitPerMinute: r.rate_limit_per_minute }) };
}

/**
 * The merchant's stored policy, or null when the merchant does not exist. With `lock`, the merchant row is locked
 * (FOR NO KEY UPDATE: inserts that reference the merchant, such as its quotes, are not held up) until the end of the
 * transaction: every reservation that checks a daily limit, and every policy change, queues on it.
 */
export async function readPolicy(db: Queryable, merchantId: string, options: { lock?: boolean } = {}): Promise<StoredPolicy | null> {
  const { rows } = await db.query<RawPolicy>(
    `SELECT p.max_payment_set, p.max_payment_micros::text, p.daily_limit_set, p.daily_limit_micros::text,
            p.approval_above_set, p.approval_above_micros::text, p.approval_above_per_day_set,
            p.approval_above_per_day_micros::text, p.allowlist, p.rate_limit_per_minute
       FROM merchants m LEFT JOIN merchant_policies p ON p.merchant_id = m.id
      WHERE m.id = $1${options.lock ? ' FOR NO KEY UPDATE OF m' : ''}`,
    [merchantId],
  );
  return rows[0] ? toStored(rows[0]) : null;
}

/** Replaces the merchant's stored overrides with `policy` (an empty one inherits every default). */
export async function upsertPolicy(db: Queryable, merchantId: string, policy: StoredPolicy, at: Date): Promise<void> {
  const o = policy.overrides;
  const pair = (v: bigint | null | undefined) => [v !== undefined, v === undefined || v === null ? null : v.toString()];
  await db.query(
    `INSERT INTO merchant_policies (merchant_id, max_payment_set, max_payment_micros, daily_limit_set, daily_limit_micros,
       approval_above_set, approval_above_micros, allowlist, rate_limit_per_minute, updated_at,
       approval_above_per_day_set, approval_above_per_day_micros)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
     ON CONFLICT (merchant_id) DO UPDATE SET
       max_payment_set = EXCLUDED.max_payment_set, max_payment_micros = EXCLUDED.max_payment_micros,
       daily_limit_set = EXCLUDED.daily_limit_set, daily_limit_micros = EXCLUDED.daily_limit_micros,
       approval_above_set = EXCLUDED.approval_above_set, approval_above_micros = EXCLUDED.approval_above_micros,
       allowlist = EXCLUDED.allowlist, rate_limit_per_minute = EXCLUDED.rate_limit_per_minute, updated_at = EXCLUDED.updated_at,
       approval_above_per_day_set = EXCLUDED.approval_above_per_day_set,
       approval_above_per_day_micros = EXCLUDED.approval_above_per_day_micros`,
    [
      merchantId,
      ...pair(o.maxPaymentMicros),
      ...pair(o.dailyLimitMicros),
      ...pair(o.approvalAboveMicros),
      o.allowlist ?? null,
      policy.rateLimitPerMinute ?? null,
      at,
      ...pair(o.approvalAbovePerDayMicros),
    ],
  );
}

/**
 * The amount of the merchant's payment intents created after `since` that are not in one of `excluded` (the
 * statuses whose funds went back to the treasury).
 */
export async function readMerchantVolume(db: Queryable, merchantId: string, since: Date, excluded: readonly PaymentStatus[]): Promise<bigint> {
  const { rows } = await db.query<{ volume: string }>(
    `SELECT COALESCE(SUM(amount_micros), 0)::text AS volume FROM payment_intents
      WHERE merchant_id = $1 AND created_at > $2 AND status <> ALL($3)`,
    [merchantId, since, excluded],
  );
  return BigInt(rows[0]!.volume);
}

/**
 * The amount of the merchant's payment intents created after `since` that left without an operator's approval (they
 * have no approval row: none was asked) and are not in one of `excluded` (their funds went back to the treasury).
 * Held ones have not left; approved ones had their approval.
 */
export async function readVolumeWithoutApproval(db: Queryable, merchantId: string, since: Date, excluded: readonly PaymentStatus[]): Promise<bigint> {
  const { rows } = await db.query<{ volume: string }>(
    `SELECT COALESCE(SUM(i.amount_micros), 0)::text AS volume FROM payment_intents i
      WHERE i.merchant_id = $1 AND i.created_at > $2 AND i.status <> ALL($3)
        AND NOT EXISTS (SELECT 1 FROM payment_approvals a WHERE a.payment_intent_id = i.id)`,
    [merchantId, since, excluded],
  );
  return BigInt(rows[0]!.volume);
}
