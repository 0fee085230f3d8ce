// The ledger's SQL: post a movement inside the caller's transaction, read balances.
import type { Chain } from '../domain/chain.js';
import { currencyOf, potOf, tokenOfCurrency, TOKENS, type Token, type TokenCurrency } from '../domain/token.js';
import { notifyFactChanged } from '../db/notify.js';
import type { Queryable } from '../db/pool.js';
import { isBalanced, NON_NEGATIVE, type AccountKind, type Movement } from './movements.js';

export class LedgerInvariantError extends Error {
  override readonly name = 'LedgerInvariantError';
}

export interface PostingContext {
  paymentIntentId?: string | null;
  at: Date;
}

/** The balances a quote is decided from: a posting to them drops the api's cached balances. */
const QUOTED_KINDS: readonly AccountKind[] = ['treasury_available', 'treasury_native'];

/** Rows each striped account is split into (decision 18). */
const LEDGER_STRIPES = 16;

/**
 * The stripe a posting about `paymentIntentId` updates: a hash of the id, so concurrent steps of different payments
 * mostly touch different rows; 0 without a payment. `treasury_available` is never striped: it is the one balance
 * checked under its lock.
 */
export function stripeOf(paymentIntentId: string | null | undefined): number {
  if (!paymentIntentId) return 0;
  let hash = 0;
  for (let i = 0; i < paymentIntentId.length; i++) hash = (hash * 31 + paymentIntentId.charCodeAt(i)) >>> 0;
  return hash % LEDGER_STRIPES;
}

/**
 * Writes several balanced ledger transactions in one statement (a reservation batch) and updates the materialised
 * balances once per account row. The rows are those of one stripe, the first entry's (a batch locks one stripe, not
 * one per payment); `treasury_available` is always stripe 0. Rows are updated in a fixed order (chain, currency,
 * kind, stripe), so concurrent postings never deadlock. An account that must not go negative is checked on its total
 * over every stripe: the stripe just updated plus the others as this statement's snapshot sees them, which after a
 * wait for a row lock is from before the wait, so it can miss a concurrent decrease (a safety net against a bug posting
 * twice, not a guard: `ledger verify` checks the totals exactly, and the check against overdraft is
 * `treasury_available`'s, under its lock). Must run inside the caller's transaction. Returns the transaction ids, in
 * order.
 */
export async function postMany(db: Queryable, entries: readonly { movement: Movement; context: PostingContext }[]): Promise<number[]> {
  if (entries.length === 0) return [];
  for (const { movement } of entries) {
    if (!isBalanced(movement.postings)) throw new LedgerInvariantError(`unbalanced ${movement.type} movement`);
  }
  const stripe = stripeOf(entries[0]!.context.paymentIntentId);
  const lines = entries.flatMap(({ movement }, m) =>
    movement.postings.map((p) => ({ m, chain: movement.chain, stripe: p.kind === 'treasury_available' ? 0 : stripe, ...p })),
  );
  const { rows } = await db.query<{ accounts: { chain: string; kind: AccountKind; total: string }[]; tx_ids: string[] }>(
    `WITH line AS (
       SELECT * FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::numeric[], $10::smallint[]) AS l(m, chain, currency, kind, amount, stripe)
     ), moved AS (
       INSERT INTO ledger_accounts AS a (chain, currency, kind, stripe, balance)
       SELECT chain, currency, kind, stripe, SUM(amount) FROM line GROUP BY chain, currency, kind, stripe ORDER BY chain, currency, kind, stripe
       ON CONFLICT (chain, currency, kind, stripe) DO UPDATE SET balance = a.balance + EXCLUDED.balance
       RETURNING a.id, a.chain, a.currency, a.kind, a.stripe, a.balance
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
         JOIN moved ON moved.chain = line.chain AND moved.currency = line.currency AND moved.kind = line.kind AND moved.stripe = line.stripe
     )
     SELECT (SELECT json_agg(json_build_object('chain', m.chain, 'kind', m.kind, 'total', (m.balance + COALESCE(
               (SELECT SUM(o.balance) FROM ledger_accounts o
                 WHERE o.chain = m.chain AND o.currency = m.currency AND o.kind = m.kind AND o.stripe <> m.stripe), 0))::text))
               FROM moved m) AS accounts,
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
      lines.map((l) => l.stripe),
    ],
  );
  const { accounts, tx_ids: ids } = rows[0]!;
  for (const account of accounts) {
    if (NON_NEGATIVE.includes(account.kind) && BigInt(account.total) < 0n) {
      throw new LedgerInvariantError(`${account.chain} ${account.kind} would go negative (${account.total})`);
    }
  }
  // What quotes decide from (decision 136): available USDC and the native balance for gas. A signature's debit
  // (reserved -> in flight) changes neither, and sends nothing.
  if (lines.some((l) => QUOTED_KINDS.includes(l.kind))) await notifyFactChanged(db, 'balances');
  return ids.map(Number);
}

/**
 * Locks the `treasury_available` accounts of `pots` (each a chain and a token; in chain, then currency order) and
 * returns their balances keyed by potOf.
 */
export async function lockAvailable(db: Queryable, pots: readonly { chain: Chain; token: Token }[]): Promise<Map<string, bigint>> {
  const { rows } = await db.query<{ chain: Chain; currency: string; balance: string }>(
    `SELECT a.chain, a.currency, a.balance::text FROM ledger_accounts a
       JOIN unnest($1::text[], $2::text[]) AS p(chain, currency) ON p.chain = a.chain AND p.currency = a.currency
      WHERE a.kind = 'treasury_available' AND a.stripe = 0 ORDER BY a.chain, a.currency FOR UPDATE OF a`,
    [pots.map((p) => p.chain), pots.map((p) => currencyOf(p.token))],
  );
  return new Map(pots.map(({ chain, token }) => [potOf(chain, token), BigInt(rows.find((r) => r.chain === chain && r.currency === currencyOf(token))?.balance ?? '0')]));
}

/** Available funds of every (chain, token) the ledger books, keyed by potOf: what a quote naming tokens scores. */
export async function treasuryTokenAvailable(db: Queryable): Promise<Map<string, bigint>> {
  const { rows } = await db.query<{ chain: Chain; currency: string; balance: string }>(
    `SELECT chain, currency, SUM(balance)::text AS balance FROM ledger_accounts
      WHERE kind = 'treasury_available' AND currency = ANY($1::text[]) GROUP BY chain, currency`,
    [TOKENS.map(currencyOf)],
  );
  const available = new Map<string, bigint>();
  for (const row of rows) {
    const token = tokenOfCurrency(row.currency);
    if (token !== null) available.set(potOf(row.chain, token), BigInt(row.balance));
  }
  return available;
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

/** The USDC (or `currency`, another token's) of each treasury, and the native currency it holds for fees, as the ledger books them. */
export async function treasuryBalances(db: Queryable, currency: TokenCurrency = 'USDC'): Promise<TreasuryBalance[]> {
  const { rows } = await db.query<{ chain: Chain; address: string; available: string; reserved: string; in_flight: string; native: string }>(
    `SELECT t.chain, t.address,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = $1 AND a.kind = 'treasury_available'), 0)::text AS available,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = $1 AND a.kind IN ('treasury_reserved', 'treasury_in_flight')), 0)::text AS reserved,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = $1 AND a.kind = 'treasury_in_flight'), 0)::text AS in_flight,
            COALESCE(SUM(a.balance) FILTER (WHERE a.currency = t.native_currency AND a.kind = 'treasury_native'), 0)::text AS native
       FROM treasuries t
       LEFT JOIN ledger_accounts a ON a.chain = t.chain AND a.currency IN ($1, t.native_currency)
      GROUP BY t.chain, t.address
      ORDER BY t.chain`,
    [currency],
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

/** Which of `intentIds` already had their funds debited (moved to in flight) by their first signed transfer. */
export async function intentsWithDebit(db: Queryable, intentIds: readonly string[]): Promise<Set<string>> {
  if (intentIds.length === 0) return new Set();
  const { rows } = await db.query<{ id: string }>(
    "SELECT DISTINCT payment_intent_id AS id FROM ledger_transactions WHERE payment_intent_id = ANY($1::text[]) AND type = 'debit'",
    [intentIds],
  );
  return new Set(rows.map((r) => r.id));
}

