// Named operators (decision 100): a role each and a bearer token shown once, stored only as
// HMAC-SHA256(API_KEY_SALT, token). Authentication reads the operator's row on every request (no cache), so a
// disabled operator or a rotated-out token is refused from the next request in every process.
import { createHmac, randomBytes } from 'node:crypto';
import type { Config } from '../../config.js';
import type { Pool, Queryable } from '../../db/pool.js';
import { audited, type AuditConfig, type AuditEntry } from './audit.js';
import {
  markOperatorDisabled as disableOperatorRow,
  readOperator,
  readOperatorByTokenHash,
  insertOperator,
  listOperators,
  updateOperatorToken,
  type OperatorRole,
  type OperatorRow,
} from '../../db/queries/operators.js';
import { AppError } from '../../domain/errors.js';
import { newId } from '../../ids.js';

export type { OperatorRole, OperatorRow };

export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'operator', 'approver', 'admin'];
const TOKEN_PREFIX = 'sr_op_';
/** Characters of a token shown in listings: sr_op_ and 8 random ones. */
const SHOWN_PREFIX_LENGTH = TOKEN_PREFIX.length + 8;
export const OPERATOR_NAME_MAX_LENGTH = 200;

function hashOperatorToken(salt: string, token: string): string {
  return createHmac('sha256', salt).update(`operator:${token}`, 'utf8').digest('hex');
}

function newToken(salt: string): { token: string; hash: string; prefix: string } {
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashOperatorToken(salt, token), prefix: token.slice(0, SHOWN_PREFIX_LENGTH) };
}

/** Why a name or role cannot make an operator, or null. */
export function operatorInputProblem(name: string, role: string): string | null {
  if (name.trim() === '' || name.length > OPERATOR_NAME_MAX_LENGTH || /\p{Cc}/u.test(name)) {
    return `--name must be 1 to ${OPERATOR_NAME_MAX_LENGTH} printable characters`;
  }
  if (!(OPERATOR_ROLES as readonly string[]).includes(role)) return `--role must be one of ${OPERATOR_ROLES.join(', ')}`;
  return null;
}

export async function createOperator(
  pool: Pool,
  config: Pick<Config, 'apiKeySalt' | 'audit'>,
  input: { name: string; role: OperatorRole },
  at: Date,
  audit: AuditEntry,
): Promise<{ operator: OperatorRow; token: string }> {
  const { token, hash, prefix } = newToken(config.apiKeySalt);
  const operator: OperatorRow = { id: newId('op'), name: input.name.trim(), role: input.role, token_prefix: prefix, created_at: at, token_rotated_at: null, disabled_at: null };
  const entry = { ...audit, targets: [operator.id], details: { name: operator.name, role: operator.role } };
  await audited({ pool, config }, entry, at, (tx) => insertOperator(tx, { ...operator, token_hash: hash }));
  return { operator, token };
}

export async function operators(db: Queryable): Promise<OperatorRow[]> {
  return listOperators(db);
}

/**
 * The name an actor is shown by (GET /admin/me): an operator's own, what the break-glass token and local development
 * stand for, or null for an actor without one.
 */
export async function actorName(db: Queryable, actorId: string): Promise<string | null> {
  const operator = actorId.startsWith('op_') ? await readOperator(db, actorId) : null;
  return operator?.name ?? (actorId === 'break-glass' ? 'break-glass (ADMIN_TOKEN)' : actorId === 'local' ? 'local (development)' : null);
}

async function requireActive(db: Queryable, id: string): Promise<never> {
  const found = await readOperator(db, id);
  if (!found) throw new AppError('OPERATOR_NOT_FOUND', `operator ${id} was not found`);
  throw new AppError('INVALID_STATE', `operator ${id} was disabled at ${found.disabled_at!.toISOString()}`);
}

/** Disables an operator: its token is refused from the commit on, in every process. */
export async function disableOperator(pool: Pool, config: AuditConfig, id: string, at: Date, audit: AuditEntry): Promise<OperatorRow> {
  return audited({ pool, config }, audit, at, async (tx) => (await disableOperatorRow(tx, id, at)) ?? requireActive(tx, id));
}

/** A new token for an active operator, shown once; the old one is refused from the commit on. */
export async function rotateOperatorToken(
  pool: Pool,
  config: Pick<Config, 'apiKeySalt' | 'audit'>,
  id: string,
  at: Date,
  audit: AuditEntry,
): Promise<{ operator: OperatorRow; token: string }> {
  const { token, hash, prefix } = newToken(config.apiKeySalt);
  const operator = await audited({ pool, config }, audit, at, async (tx) => (await updateOperatorToken(tx, id, hash, prefix, at)) ?? requireActive(tx, id));
  return { operator, token };
}

/** The active operator holding `token`, or null (unknown, rotated out, or disabled). */
export async function authenticateOperator(db: Queryable, config: Pick<Config, 'apiKeySalt'>, token: string): Promise<OperatorRow | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 128) return null;
  const found = await readOperatorByTokenHash(db, hashOperatorToken(config.apiKeySalt, token));
  return found && found.disabled_at === null ? found : null;
}
