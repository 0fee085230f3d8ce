// Every statement on execution_leases. Times come from the database clock (now()), like pg-boss's: every process
// compares against one clock, so a process whose clock drifts cannot take a live lease early.
import type { Queryable } from '../pool.js';
import { attemptColumns, attemptOf, LIVE_STATUSES, type AttemptRow, type RawAttemptRow } from './attempts.js';

export interface LeaseRow {
  owner: string;
  attempt: number;
  takeovers: number;
  /** expires_at has passed (by the database clock). */
  expired: boolean;
}

/** What an execution's claim (and whoever decides about an execution: the dead-letter handler, an operator's retry) reads about an intent besides the intent itself. */
export interface ExecutionFacts {
  /** Times the intent went to `retrying`: the attempt number is one more. */
  retries: number;
  awaitsApproval: boolean;
  lease: LeaseRow | null;
  /** The transfer an earlier run left (signed, perhaps sent), or the one already broadcast. */
  live: AttemptRow | null;
  /**
   * An on-chain batch that paid it could not land (an attempt of a shared transaction failed): from then on it is
   * prepared in a transaction of its own (decision 176).
   */
  alone: boolean;
}

/**
 * The execution facts of each of `ids`, in one statement: the retries, whether an operator approval is
 * awaited, the lease (locked) and the live attempt. Read after the intents' row locks are taken, in a statement of its
 * own: one that waited for those locks would still see the other tables as they were before the wait (decision 140).
 * Every intent asked is in the answer.
 */
export async function readExecutionFacts(tx: Queryable, ids: readonly string[]): Promise<Map<string, ExecutionFacts>> {
  const { rows } = await tx.query<
    RawAttemptRow & {
      intent_id: string;
      retries: number;
      awaits_approval: boolean;
      alone: boolean;
      lease_owner: string | null;
      lease_attempt: number;
      lease_takeovers: number;
      lease_expired: boolean;
    }
  >(
    `WITH lease AS MATERIALIZED (
       SELECT payment_intent_id, owner, attempt, takeovers, expires_at < now() AS expired
         FROM execution_leases WHERE payment_intent_id = ANY($1::text[]) FOR UPDATE)
     SELECT i.id AS intent_id,
            (SELECT COUNT(*)::int FROM payment_intent_transitions t WHERE t.payment_intent_id = i.id AND t.to_status = 'retrying') AS retries,
            EXISTS (SELECT 1 FROM payment_approvals p WHERE p.payment_intent_id = i.id AND p.status <> 'approved') AS awaits_approval,
            EXISTS (SELECT 1 FROM payment_attempts b WHERE b.payment_intent_id = i.id AND b.tx_payments > 1 AND b.status = 'failed') AS alone,
            l.owner AS lease_owner, l.attempt AS lease_attempt, l.takeovers AS lease_takeovers, l.expired AS lease_expired, a.*
       FROM unnest($1::text[]) AS i(id)
       LEFT JOIN lease l ON l.payment_intent_id = i.id
       LEFT JOIN LATERAL (
         SELECT ${attemptColumns()} FROM payment_attempts WHERE payment_intent_id = i.id AND status = ANY($2::text[])
          ORDER BY created_at DESC, id DESC LIMIT 1) AS a ON true`,
    [ids, LIVE_STATUSES],
  );
  return new Map(
    rows.map(({ intent_id, retries, awaits_approval, alone, lease_owner, lease_attempt, lease_takeovers, lease_expired, ...attempt }) => [
      intent_id,
      {
        retries,
        awaitsApproval: awaits_approval,
        alone,
        lease: lease_owner === null ? null : { owner: lease_owner, attempt: lease_attempt, takeovers: lease_takeovers, expired: lease_expired },
        live: attempt.id === null ? null : attemptOf(attempt),
      },
    ]),
  );
}

/**
 * For each (intent, run): whether the run holds the intent's execution lease, and the intent's live attempt (locked
 * with `lockAttempts`), in one statement. Call with the intents' row locks held: a lease changes hands only under its
 * intent's lock, so even when an attempt's lock makes the statement wait, the lease it read is still the lease
 * (decision 140). In input order.
 */
export async function readLeasesAndLive(
  db: Queryable,
  pairs: readonly { intentId: string; runId: string }[],
  options: { lockAttempts?: boolean } = {},
): Promise<{ holdsLease: boolean; live: AttemptRow | null }[]> {
  if (pairs.length === 0) return [];
  const { rows } = await db.query<RawAttemptRow & { holds_lease: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM execution_leases l WHERE l.payment_intent_id = p.intent AND l.owner = p.run) AS holds_lease, a.*
       FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS p(intent, run, k)
       LEFT JOIN LATERAL (
         SELECT ${attemptColumns()} FROM payment_attempts WHERE payment_intent_id = p.intent AND status = ANY($3::text[])
          ORDER BY created_at DESC, id DESC LIMIT 1${options.lockAttempts ? ' FOR UPDATE' : ''}) AS a ON true
      ORDER BY p.k`,
    [pairs.map((p) => p.intentId), pairs.map((p) => p.runId), LIVE_STATUSES],
  );
  return rows.map(({ holds_lease: holdsLease, ...attempt }) => ({ holdsLease, live: attempt.id === null ? null : attemptOf(attempt) }));
}

export interface NewLease {
  intentId: string;
  owner: string;
  attempt: number;
  seconds: number;
  takeovers: number;
}

/**
 * Gives each lease to its `owner` for `seconds`, in one statement (distinct intents). `takeovers` is what the row
 * should count: the caller knows whether it takes over from a dead run. Call with the intents' row locks held.
 */
export async function upsertLeases(tx: Queryable, leases: readonly NewLease[]): Promise<void> {
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

/** The heartbeat: pushes each lease's expiry out while its owner still holds it, in one statement. */
export async function updateLeaseExpiries(db: Queryable, leases: readonly { intentId: string; owner: string }[], seconds: number): Promise<void> {
  if (leases.length === 0) return;
  await db.query(
    `UPDATE execution_leases e SET expires_at = now() + make_interval(secs => $3)
       FROM unnest($1::text[], $2::text[]) AS l(intent, owner)
      WHERE e.payment_intent_id = l.intent AND e.owner = l.owner`,
    [leases.map((l) => l.intentId), leases.map((l) => l.owner), seconds],
  );
}

/** Each lease given back by its owner; a lease another owner holds now stays. */
export async function deleteLeases(db: Queryable, leases: readonly { intentId: string; owner: string }[]): Promise<void> {
  if (leases.length === 0) return;
  await db.query(
    `DELETE FROM execution_leases e USING unnest($1::text[], $2::text[]) AS l(intent, owner)
      WHERE e.payment_intent_id = l.intent AND e.owner = l.owner`,
    [leases.map((l) => l.intentId), leases.map((l) => l.owner)],
  );
}

/** The statuses of a payment whose run may die holding its lease: fetched but not claimed yet, or being executed. */
const LEASED_STATUSES = ['route_selected', 'retrying', 'broadcasting'];

/**
 * Leases each fetched job's payment to the run that fetched it, for `seconds`, in one statement, where no lease is held:
 * a run that holds one (alive, or dead and left to the sweeper) keeps it, and a job of a payment no run works on (unknown,
 * finished) leases nothing. Call on the fetch's transaction, so a job is never active without its lease (decision 191).
 */
export async function insertFetchedLeases(tx: Queryable, leases: readonly { intentId: string; owner: string; attempt: number }[], seconds: number): Promise<void> {
  if (leases.length === 0) return;
  await tx.query(
    `INSERT INTO execution_leases (payment_intent_id, owner, attempt, expires_at, takeovers)
     SELECT l.intent, l.owner, l.attempt, now() + make_interval(secs => $4), 0
       FROM unnest($1::text[], $2::text[], $3::int[]) AS l(intent, owner, attempt)
       JOIN payment_intents i ON i.id = l.intent AND i.status = ANY($5::text[])
     ON CONFLICT (payment_intent_id) DO NOTHING`,
    [leases.map((l) => l.intentId), leases.map((l) => l.owner), leases.map((l) => l.attempt), seconds, LEASED_STATUSES],
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
 * Takes over, for new owners `${ownerPrefix}${intentId}`, up to `limit` expired leases of intents still waiting for
 * their run (fetched, not claimed) or in 'broadcasting', whose intent row nobody holds (SKIP LOCKED: a run in the middle
 * of a step is alive). One statement, so two sweepers never take the same lease.
 */
export async function claimExpiredLeases(db: Queryable, ownerPrefix: string, seconds: number, limit: number): Promise<TakenLease[]> {
  const { rows } = await db.query<{ payment_intent_id: string; attempt: number; takeovers: number; owner: string }>(
    `WITH expired AS (
       SELECT l.payment_intent_id
         FROM execution_leases l JOIN payment_intents i ON i.id = l.payment_intent_id
        WHERE l.expires_at < now() AND i.status = ANY($4::text[])
        ORDER BY l.expires_at
        LIMIT $3
          FOR UPDATE OF l, i SKIP LOCKED)
     UPDATE execution_leases l
        SET owner = $1 || l.payment_intent_id, expires_at = now() + make_interval(secs => $2), takeovers = l.takeovers + 1
       FROM expired
      WHERE l.payment_intent_id = expired.payment_intent_id
     RETURNING l.payment_intent_id, l.attempt, l.takeovers, l.owner`,
    [ownerPrefix, seconds, limit, LEASED_STATUSES],
  );
  return rows.map((r) => ({ intentId: r.payment_intent_id, attempt: r.attempt, takeovers: r.takeovers, owner: r.owner }));
}

/** Removes expired leases of intents no run works on any more (their run finished its work, then died). */
export async function deleteStaleLeases(db: Queryable): Promise<number> {
  const result = await db.query(
    `DELETE FROM execution_leases l USING payment_intents i
      WHERE i.id = l.payment_intent_id AND l.expires_at < now() AND NOT i.status = ANY($1::text[])`,
    [LEASED_STATUSES],
  );
  return result.rowCount ?? 0;
}
