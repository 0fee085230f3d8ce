// An audit record as stored and as hashed (decisions 102, 186). Pure: the same record always yields the same text
// and the same hash, whoever computes it.
import { createHash, createHmac } from 'node:crypto';
import { AUDIT_DETAILS_DEPTH_MAX } from '../bounds.js';

export const GENESIS_HASH = '0'.repeat(64);

/** The fields a record's hash covers, besides its sequence number and the hash of the record before it. */
export interface AuditRecordBody {
  at: Date;
  actor: string;
  actor_role: string | null;
  action: string;
  targets: string[];
  details: Record<string, unknown>;
  peer: string | null;
  outcome: string;
}

const SECRET_KEYS = /token|secret|password|passphrase|authorization|private|^pin$|^api_key$|^key$/i;
// A code unit PostgreSQL cannot store: NUL (text and jsonb refuse it) or half of a surrogate pair (not Unicode).
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The text as PostgreSQL stores it: NUL and lone surrogates become U+FFFD, so a record never fails on what a client sent. */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/**
 * Details as stored: every key and string storable, secret-looking keys redacted, bigints and non-integers as
 * strings (they survive jsonb exactly), nesting cut at a bounded depth.
 */
export function storableDetails(details: Record<string, unknown>): Record<string, unknown> {
  return storable(details, '', 0) as Record<string, unknown>;
}

function storable(value: unknown, key: string, depth: number): unknown {
  if (key !== '' && SECRET_KEYS.test(key)) return '[redacted]';
  if (typeof value === 'string') return storableText(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : String(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'boolean') return value;
  // null, and what JSON has no form for (a function, a symbol): stored and hashed alike as null.
  if (value === null || typeof value !== 'object') return null;
  if (depth >= AUDIT_DETAILS_DEPTH_MAX) return '[too deep]';
  if (Array.isArray(value)) return value.map((v) => storable(v, '', depth + 1));
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [storableText(k), storable(v, k, depth + 1)]),
  );
}

/** JSON with keys sorted at every level: the same record always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * A record's hash: HMAC-SHA256 under the audit key of its sequence number, the previous record's hash and its
 * canonical fields. `key` null: plain SHA-256, as records were hashed before the key existed (decision 186).
 */
export function auditRecordHash(key: string | null, seq: bigint, prevHash: string, row: AuditRecordBody): string {
  const body = canonical({
    at: row.at.toISOString(),
    actor: row.actor,
    actor_role: row.actor_role,
    action: row.action,
    targets: row.targets,
    details: row.details,
    peer: row.peer,
    outcome: row.outcome,
  });
  const input = `${seq}\n${prevHash}\n${body}`;
  return (key === null ? createHash('sha256') : createHmac('sha256', key)).update(input).digest('hex');
}

/**
 * The seal of the boundary between records written before the key and after it (decision 186): whoever can write the
 * database could otherwise move the boundary up to the head and pass a log rewritten with plain SHA-256 off as old.
 */
export function unkeyedSeal(key: string, unkeyedThrough: bigint, lastUnkeyedHash: string): string {
  return createHmac('sha256', key).update(`unkeyed-through\n${unkeyedThrough}\n${lastUnkeyedHash}`).digest('hex');
}
