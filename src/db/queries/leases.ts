// Every statement on execution_leases. Times come from the database clock (now()), like pg-boss's: every process
// compares against one clock, so a process whose clock drifts cannot take a live lease early.
import type { Queryable } from '../pool.js';

export interface LeaseRow {
  owner: string;
  attempt: number;
  takeovers: number;
  /** expires_at has passed (by the database clock). */
  expired: boolean;
}

/** The intent's lease, locked, or null. Call with the intent's row lock held. */
export async function lockLease(tx: Queryable, intentId: string): Promise<LeaseRow | null> {
  const { rows } = await tx.query<LeaseRow>(
    `SELECT owner, attempt, takeovers, expires_at < now() AS expired FROM execution_leases WHERE payment_intent_id = $1 FOR UPDATE`,
    [intentId],
  );
  return rows[0] ?? null;
}

/**
 * Gives the lease to `owner` for `seconds`. `takeovers` is what the row should count: the caller knows whether it
 * takes over from a dead run. Call with the intent's row lock held.
 */
export async function grantLease(tx: Queryable, lease: NewLease): Promise<void> {
  await grantLeases(tx, [lease]);
}

export interface NewLease {
  intentId: string;
  owner: string;
  attempt: number;
  seconds: number;
  takeovers: number;
}

/** grantLease for several intents (distinct), in one statement. */
export async function grantLeases(tx: Queryable, leases: readonly NewLease[]): Promise<void> {
  if (leases.length === 0) return;
  await tx.query(
    `INSERT INTO execution_leases (payment_intent_id, owner, attempt, expires_at, takeovers)
     SELECT intent, owner, attempt, now() + make_interval(secs => seconds), takeovers
       FROM unnest($1::text[], $2::text[], $3::int[], $4::float8[], $5::int[]) AS l(intent, owner, attempt, seconds, takeovers)
     ON CONFLICT (payment_intent_id) DO UPDATE
       SET owner = EXCLUDED.owner, attempt = EXCLUDED.attempt, expires_at = EXCLUDED.expires_at, takeovers = EXCLUDED.takeovers`,
    [leases.map((l) => l.intentId), leases.map((l) => l.owner), leases.map((l) => l.attempt), leases.map((l) => l.seconds), leases.map((l) => l.takeovers)],
  );
}

/** The heartbeat: pushes the lease's expiry out while `owner` still holds it. False when it no longer does. */
export async function renewLease(db: Queryable, intentId: string, owner: string, seconds: number): Promise<boolean> {
  const result = await db.query(
    'UPDATE execution_leases SET expires_at = now() + make_interval(secs => $3) WHERE payment_intent_id = $1 AND owner = $2',
    [intentId, owner, seconds],
  );
  return result.rowCount === 1;
}

/** Lets go of the lease, if `owner` still holds it. */
export async function releaseLease(db: Queryable, intentId: string, owner: string): Promise<void> {
  await releaseLeases(db, [{ intentId, owner }]);
}

/** Each lease given back by its owner; a lease another owner holds now stays. */
export async function releaseLeases(db: Queryable, leases: readonly { intentId: string; owner: string }[]): Promise<void> {
  if (leases.length === 0) return;
  await db.query(
    `DELETE FROM execution_leases e USING unnest($1::text[], $2::text[]) AS l(intent, owner)
      WHERE e.payment_intent_id = l.intent AND e.owner = l.owner`,
    [leases.map((l) => l.intentId), leases.map((l) => l.owner)],
  );
}

export interface TakenLease {
  intentId: string;
  attempt: number;
  /** Dead runs of this attempt so far, this one included. */
  takeovers: number;
  owner: string;
}

/**
 * Takes over, for new owners `${ownerPrefix}${intentId}`, up to `limit` expired leases of intents still in
 * 'broadcasting' whose intent row nobody holds (SKIP LOCKED: a run in the middle of a step is alive). One statement,
 * so two sweepers never take the same lease.
 */
export async function takeExpiredLeases(db: Queryable, ownerPrefix: string, seconds: number, limit: number): Promise<TakenLease[]> {
  const { rows } = await db.query<{ payment_intent_id: string; attempt: number; takeovers: number; owner: string }>(
    `WITH expired AS (
       SELECT l.payment_intent_id
         FROM execution_leases l JOIN payment_intents i ON i.id = l.payment_intent_id
        WHERE l.expires_at < now() AND i.status = 'broadcasting'
        ORDER BY l.expires_at
        LIMIT $3
          FOR UPDATE OF l, i SKIP LOCKED)
     UPDATE execution_leases l
        SET owner = $1 || l.payment_intent_id, expires_at = now() + make_interval(secs => $2), takeovers = l.takeovers + 1
       FROM expired
      WHERE l.payment_intent_id = expired.payment_intent_id
     RETURNING l.payment_intent_id, l.attempt, l.takeovers, l.owner`,
    [ownerPrefix, seconds, limit],
  );
  return rows.map((r) => ({ intentId: r.payment_intent_id, attempt: r.attempt, takeovers: r.takeovers, owner: r.owner }));
}

/** Removes expired leases of intents that left 'broadcasting' (their run finished its work, then died). */
export async function dropStaleLeases(db: Queryable): Promise<number> {
  const result = await db.query(
    `DELETE FROM execution_leases l USING payment_intents i
      WHERE i.id = l.payment_intent_id AND l.expires_at < now() AND i.status <> 'broadcasting'`,
  );
  return result.rowCount ?? 0;
}
