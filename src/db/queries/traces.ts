// Traceparents of payments and quotes (migration 106): read and written only while traces are on (decision 212). A
// quote's is written with the quote (insertQuotes); a payment's by its reservation, below.
import type { Queryable } from '../pool.js';

/** The tables that keep a traceparent, by id. */
type Traced = 'payment_intents' | 'quotes';

/** The traceparents of `ids` in `table` that have one. */
export async function readTraceparents(db: Queryable, table: Traced, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{ id: string; traceparent: string }>(
    `SELECT id, traceparent FROM ${table} WHERE id = ANY($1::text[]) AND traceparent IS NOT NULL`,
    [ids],
  );
  return new Map(rows.map((r) => [r.id, r.traceparent]));
}

/** Stores each payment's traceparent, in one statement. */
export async function updatePaymentTraceparents(db: Queryable, traces: readonly { id: string; traceparent: string }[]): Promise<void> {
  if (traces.length === 0) return;
  await db.query(
    `UPDATE payment_intents p SET traceparent = t.traceparent
       FROM unnest($1::text[], $2::text[]) AS t(id, traceparent) WHERE p.id = t.id`,
    [traces.map((t) => t.id), traces.map((t) => t.traceparent)],
  );
}
