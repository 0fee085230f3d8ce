// Keyset cursors of GET /admin/payments: opaque to clients (base64url of the last row's creation time and id),
// checked on the way back in so that a tampered cursor is a 400, never a SQL error.
import type { IntentCursor } from '../../db/queries/intent-list.js';
import { AppError } from '../../domain/errors.js';

const CREATED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID = /^[A-Za-z0-9_]{1,128}$/;

export function encodeCursor(cursor: IntentCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdAt, cursor.id])).toString('base64url');
}

export function decodeCursor(text: string): IntentCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  if (Array.isArray(parsed) && parsed.length === 2) {
    const [createdAt, id] = parsed as unknown[];
    if (typeof createdAt === 'string' && CREATED_AT.test(createdAt) && typeof id === 'string' && ID.test(id)) return { createdAt, id };
  }
  throw new AppError('INVALID_CURSOR', 'cursor is not one this service returned; start again from the first page');
}
