// The ledger's SQL: post a movement inside the caller's transaction, read balances.
import type { Chain } from '../domain/chain.js';
import type { Queryable } from '../db/pool.js';
import { isBalanced, NON_NEGATIVE, type AccountKind, type Movement } from './movements.js';

export class LedgerInvariantError extends Error {
  override readonly name = 'LedgerInvariantError';
}

export interface PostingContext {
  paymentIntentId?: string | null;
  at: Date;
}

/**
 * Writes one balanced ledger transaction and updates the materialised balances. Must run inside the caller's
 * transaction. Returns the ledger transaction's id.
 */
export async function post(db: Queryable, movement: Movement, context: PostingContext): Promise<number> {
  return (await postMany(db, [{ movement, context }]))[0]!;
}

/**
 * Writes several balanced ledger transactions in one statement (a reservation batch) and updates the materialised
 * balances once per account. Accounts are updated in a fixed order (chain, currency, kind), so concurrent postings
 * never deadlock. Must run inside the caller's transaction. Returns the transaction ids, in order.
 */
export async function postMany(db: Queryable, entries: readonly { movement: Movement; context: PostingContext }[]): Promise<number[]> {
  if (entries.length === 0) return [];
  for (const { movement } of entries) {
    if (!isBalanced(movement.postings)) throw new LedgerInvariantError(`unbalanced ${movement.type} movement`);
  }
  const lines = entries.flatMap(({ movement }, m) => movement.postings.map((p) => ({ m, chain: movement.chain, ...p })));
  const { rows } = await db.query<{ accounts: { chain: string; kind: AccountKind; balance: string }[]; tx_ids: string[] }>(
    `WITH line AS (
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::numeric[]) AS l(m, chain, currency, kind, amount)
     ), moved AS (
       INSERT INTO ledger_accounts AS a (chain, currency, kind, balance)
       SELECT chain, currency, kind, SUM(amount) FROM line GROUP BY chain, currency, kind ORDER BY chain, currency, kind
       ON CONFLICT (chain, currency, kind) DO UPDATE SET balance = a.balance + EXCLUDED.balance
       RETURNING a.id, a.chain, a.currency, a.kind, a.balance
     ), tx AS (
       SELECT v.m, nextval('ledger_transactions_id_seq') AS id, v.type, v.chain, v.payment_intent_id, v.at
         FROM unnest($6::text[], $7::text[], $8::text[], $9::timestamptz[]) WITH ORDINALITY AS v(type, chain, payment_intent_id, at, m)
     ), transactions AS (
       INSERT INTO ledger_transactions (id, type, chain, payment_intent_id, created_at)
       SELECT id, type, chain, payment_intent_id, at FROM tx ORDER BY m
     ), posted AS (
       INSERT INTO ledger_postings (transaction_id, account_id, currency, amount)
       SELECT tx.id, moved.id, line.currency, line.amount
         FROM line
         JOIN tx ON tx.m = line.m + 1
         JOIN moved ON moved.chain = line.chain AND moved.currency = line.currency AND moved.kind = line.kind
     )
     SELECT (SELECT json_agg(json_build_object('chain', chain, 'kind', kind, 'balance', balance::text)) FROM moved) AS accounts,
            (SELECT array_agg(id::text ORDER BY m) FROM tx) AS tx_ids`,
    [
      lines.map((l) => l.m),
      lines.map((l) => l.chain),
      lines.map((l) => l.currency),
      lines.map((l) => l.kind),
      lines.map((l) => l.amount.toString()),
      entries.map((e) => e.movement.type),
      entries.map((e) => e.movement.chain),
      entries.map((e) => e.context.paymentIntentId ?? null),
      entries.map((e) => e.context.at),
    ],
  );
  const { accounts, tx_ids: ids } = rows[0]!;
  for (const account of accounts) {
    if (NON_NEGATIVE.includes(account.kind) && BigInt(account.balance) < 0n) {
      throw new LedgerInvariantError(`${account.chain} ${account.kind} would go negative (${account.balance})`);
    }
  }
  return ids.map(Number);
}

/** Locks the `treasury_available` USDC accounts of `chains` (in chain order) and returns their balances. */
export async function lockAvailable(db: Queryable, chains: readonly Chain[]): Promise<Map<Chain, bigint>> {
  const { rows } = await db.query<{ chain: Chain; balance: string }>(
    `SELECT chain, balance::text FROM ledger_accounts
      WHERE chain = ANY($1) AND currency = 'USDC' AND kind = 'treasury_available' ORDER BY chain FOR UPDATE`,
    [[...chains].sort()],
  );
  return new Map(chains.map((chain) => [chain, BigInt(rows.find((r) => r.chain === chain)?.balance ?? '0')]));
}

export interface TreasuryBalance {
  chain: Chain;
  address: string;
  availableMicros: bigint;
  /** Reserved for intents, including funds in flight: they are not final yet (the spec's reserved_balance). */
  reservedMicros: bigint;
  /** In signed or broadcast transfers, not final: still in the wallet on chain. */
  inFlightMicros: bigint;
  /** Booked native currency for fees (wei, lamports). */
  nativeUnits: bigint;
}

/** The USDC of each treasury, and the native currency it holds for fees, as the ledger books them. */
export async function treasuryBalances(db: Queryable): Promise<TreasuryBalance[]> {
  const { rows } = await db.query<{ chain: Chain; address: string; available: string; reserved: string; in_flight: string; native: string }>(
    `SELECT t.chain, t.address,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = 'USDC' AND a.kind = 'treasury_available'), 0)::text AS available,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = 'USDC' AND a.kind IN ('treasury_reserved', 'treasury_in_flight')), 0)::text AS reserved,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = 'USDC' AND a.kind = 'treasury_in_flight'), 0)::text AS in_flight,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = t.native_currency AND a.kind = 'treasury_native'), 0)::text AS native
       FROM treasuries t
       LEFT JOIN ledger_accounts a ON a.chain = t.chain AND a.currency IN ('USDC', t.native_currency)
      GROUP BY t.chain, t.address
      ORDER BY t.chain`,
  );
  return rows.map((r) => ({
    chain: r.chain,
    address: r.address,
    availableMicros: BigInt(r.available),
    reservedMicros: BigInt(r.reserved),
    inFlightMicros: BigInt(r.in_flight),
    nativeUnits: BigInt(r.native),
  }));
}

/** USDC the wallet should hold on chain: available + reserved (reserved includes what is in flight). */
export function holdingsOf(balance: TreasuryBalance): bigint {
  return balance.availableMicros + balance.reservedMicros;
}

/** Whether the intent's funds were debited (moved to in flight) by its first signed transfer. */
export async function hasDebit(db: Queryable, intentId: string): Promise<boolean> {
  const { rowCount } = await db.query("SELECT 1 FROM ledger_transactions WHERE payment_intent_id = $1 AND type = 'debit'", [intentId]);
  return (rowCount ?? 0) > 0;
}
