// Traceparents of payments and quotes (migration 106): read and written only while traces are on (decision 212).
import type { Queryable } from '../pool.js';

/** The traceparents of `intentIds` that have one. */
export async function paymentTraceparents(db: Queryable, intentIds: readonly string[]): Promise<Map<string, string>> {
  if (intentIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; traceparent: string }>(
    'SELECT id, traceparent FROM payment_intents WHERE id = ANY($1::text[]) AND traceparent IS NOT NULL',
    [intentIds],
  );
  return new Map(rows.map((r) => [r.id, r.traceparent]));
}

/** The traceparents of `quoteIds` that have one. */
export async function quoteTraceparents(db: Queryable, quoteIds: readonly string[]): Promise<Map<string, string>> {
  if (quoteIds.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; traceparent: string }>(
    'SELECT id, traceparent FROM quotes WHERE id = ANY($1::text[]) AND traceparent IS NOT NULL',
    [quoteIds],
  );
  return new Map(rows.map((r) => [r.id, r.traceparent]));
}

/** Stores each payment's traceparent, in one statement. */
export async function setPaymentTraceparents(db: Queryable, traces: readonly { id: string; traceparent: string }[]): Promise<void> {
  if (traces.length === 0) return;
  await db.query(
    `UPDATE payment_intents p SET traceparent = t.traceparent
       FROM unnest($1::text[], $2::text[]) AS t(id, traceparent) WHERE p.id = t.id`,
    [traces.map((t) => t.id), traces.map((t) => t.traceparent)],
  );
}

/** Stores each quote's traceparent, in one statement. */
export async function setQuoteTraceparents(db: Queryable, traces: readonly { id: string; traceparent: string }[]): Promise<void> {
  if (traces.length === 0) return;
  await db.query(
    `UPDATE quotes q SET traceparent = t.traceparent
       FROM unnest($1::text[], $2::text[]) AS t(id, traceparent) WHERE q.id = t.id`,
    [traces.map((t) => t.id), traces.map((t) => t.traceparent)],
  );
}
