// Operators (operators): names, roles and token hashes, never tokens.
import type { OperatorRole } from '../../domain/actor.js';
import type { Queryable } from '../pool.js';

export type { OperatorRole };

export interface OperatorRow {
  id: string;
  name: string;
  role: OperatorRole;
  token_prefix: string;
  created_at: Date;
  token_rotated_at: Date | null;
  disabled_at: Date | null;
}

const COLUMNS = 'id, name, role, token_prefix, created_at, token_rotated_at, disabled_at';

export async function insertOperator(db: Queryable, row: OperatorRow & { token_hash: string }): Promise<void> {
  await db.query('INSERT INTO operators (id, name, role, token_hash, token_prefix, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [
    row.id,
    row.name,
    row.role,
    row.token_hash,
    row.token_prefix,
    row.created_at,
  ]);
}

export async function listOperators(db: Queryable): Promise<OperatorRow[]> {
  return (await db.query<OperatorRow>(`SELECT ${COLUMNS} FROM operators ORDER BY created_at, id`)).rows;
}

export async function readOperator(db: Queryable, id: string): Promise<OperatorRow | null> {
  return (await db.query<OperatorRow>(`SELECT ${COLUMNS} FROM operators WHERE id = $1`, [id])).rows[0] ?? null;
}

/** The operator holding this token hash, disabled ones included (they are refused). One indexed lookup. */
export async function readOperatorByTokenHash(db: Queryable, tokenHash: string): Promise<OperatorRow | null> {
  return (await db.query<OperatorRow>(`SELECT ${COLUMNS} FROM operators WHERE token_hash = $1`, [tokenHash])).rows[0] ?? null;
}

/** Disables an active operator; null when it is missing or already disabled. */
export async function markOperatorDisabled(db: Queryable, id: string, at: Date): Promise<OperatorRow | null> {
  const { rows } = await db.query<OperatorRow>(
    `UPDATE operators SET disabled_at = $2 WHERE id = $1 AND disabled_at IS NULL RETURNING ${COLUMNS}`,
    [id, at],
  );
  return rows[0] ?? null;
}

/** Replaces an active operator's token hash; the old token is refused from the commit on. Null when not active. */
export async function updateOperatorToken(db: Queryable, id: string, tokenHash: string, tokenPrefix: string, at: Date): Promise<OperatorRow | null> {
  const { rows } = await db.query<OperatorRow>(
    `UPDATE operators SET token_hash = $2, token_prefix = $3, token_rotated_at = $4 WHERE id = $1 AND disabled_at IS NULL RETURNING ${COLUMNS}`,
    [id, tokenHash, tokenPrefix, at],
  );
  return rows[0] ?? null;
}

/** Whether any operator account can sign in (not disabled): then only named operators count as a second person. */
export async function readAnyActiveOperator(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ any: boolean }>('SELECT EXISTS (SELECT 1 FROM operators WHERE disabled_at IS NULL) AS any');
  return rows[0]!.any;
}
