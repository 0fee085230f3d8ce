// Inbound transfers and the deposit scanner's positions: every statement on inbound_transfers and deposit_cursors.
import type { Token } from '../../domain/token.js';
import { familyOf, type Chain } from '../../domain/chain.js';
import type { InboundMatchStatus } from '../../domain/inbound-match.js';
import type { Queryable } from '../pool.js';

export interface InboundTransferRow {
  id: number;
  chain: Chain;
  tx_id: string;
  transfer_index: number;
  from_address: string;
  currency: string;
  amount: bigint;
  match_status: InboundMatchStatus;
  payment_intent_id: string | null;
  funding_transaction_id: number | null;
  refund_transaction_id: number | null;
  reversal_transaction_id: number | null;
  booked_at: Date;
  attached_at: Date | null;
}

const COLUMNS = `id::text, chain, tx_id, transfer_index, from_address, currency, amount::text, match_status, payment_intent_id,
  funding_transaction_id::text, refund_transaction_id::text, reversal_transaction_id::text, booked_at, attached_at`;

type RawRow = Omit<InboundTransferRow, 'id' | 'amount' | 'funding_transaction_id' | 'refund_transaction_id' | 'reversal_transaction_id'> & {
  id: string;
  amount: string;
  funding_transaction_id: string | null;
  refund_transaction_id: string | null;
  reversal_transaction_id: string | null;
};

const optionalNumber = (value: string | null) => (value === null ? null : Number(value));

function toRow(raw: RawRow): InboundTransferRow {
  return {
    ...raw,
    id: Number(raw.id),
    amount: BigInt(raw.amount),
    funding_transaction_id: optionalNumber(raw.funding_transaction_id),
    refund_transaction_id: optionalNumber(raw.refund_transaction_id),
    reversal_transaction_id: optionalNumber(raw.reversal_transaction_id),
  };
}

export async function readDepositPosition(db: Queryable, chain: Chain): Promise<string | null> {
  const { rows } = await db.query<{ position: string }>('SELECT position FROM deposit_cursors WHERE chain = $1', [chain]);
  return rows[0]?.position ?? null;
}

/** Sets the chain's first position unless one exists; the position in force. */
export async function insertDepositPosition(db: Queryable, chain: Chain, position: string, at: Date): Promise<string> {
  await db.query('INSERT INTO deposit_cursors (chain, position, updated_at) VALUES ($1, $2, $3) ON CONFLICT (chain) DO NOTHING', [
    chain,
    position,
    at,
  ]);
  return (await readDepositPosition(db, chain))!;
}

/** Moves the position from `from` to `to`; false when another scanner moved it first (nothing changes). */
export async function updateDepositPosition(db: Queryable, chain: Chain, from: string, to: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE deposit_cursors SET position = $3, updated_at = $4 WHERE chain = $1 AND position = $2', [
    chain,
    from,
    to,
    at,
  ]);
  return rowCount === 1;
}

/** Which of these transfers are booked already, as `${tx id}:${index}`. */
export async function readBookedInbound(db: Queryable, chain: Chain, transfers: readonly { txId: string; index: number }[]): Promise<Set<string>> {
  if (transfers.length === 0) return new Set();
  const { rows } = await db.query<{ tx_id: string; transfer_index: number }>(
    `SELECT tx_id, transfer_index FROM inbound_transfers
      WHERE chain = $1 AND (tx_id, transfer_index) IN (SELECT * FROM unnest($2::text[], $3::int[]))`,
    [chain, transfers.map((t) => t.txId), transfers.map((t) => t.index)],
  );
  return new Set(rows.map((r) => `${r.tx_id}:${r.transfer_index}`));
}

export interface NewInboundTransfer {
  chain: Chain;
  txId: string;
  index: number;
  from: string;
  currency: string;
  amount: bigint;
  matchStatus: InboundMatchStatus;
  paymentIntentId: string | null;
  fundingTransactionId: number | null;
  refundTransactionId: number | null;
  at: Date;
}

/** Records booked inbound transfers. The unique key refuses a second booking of the same transfer. */
export async function insertInbound(db: Queryable, rows: readonly NewInboundTransfer[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <T>(pick: (row: NewInboundTransfer) => T) => rows.map(pick);
  await db.query(
    `INSERT INTO inbound_transfers (chain, tx_id, transfer_index, from_address, currency, amount, match_status, payment_intent_id,
                                    funding_transaction_id, refund_transaction_id, booked_at)
     SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::text[], $8::text[],
                          $9::bigint[], $10::bigint[], $11::timestamptz[])`,
    [
      column((r) => r.chain),
      column((r) => r.txId),
      column((r) => r.index),
      column((r) => r.from),
      column((r) => r.currency),
      column((r) => r.amount.toString()),
      column((r) => r.matchStatus),
      column((r) => r.paymentIntentId),
      column((r) => r.fundingTransactionId),
      column((r) => r.refundTransactionId),
      column((r) => r.at),
    ],
  );
}

/**
 * For each (address, amount): the settled payouts on `chain` to that address of exactly that amount that no inbound
 * transfer refunded yet, the candidates of an automatic match (decision 125), keyed `${address}:${amount}`. At most 2
 * each: more than one is ambiguous either way. Withdrawals are not payouts (decision 121): USDC coming back from a
 * withdrawal's address is funding.
 */
export async function listRefundCandidates(
  db: Queryable,
  chain: Chain,
  asks: readonly { address: string; amountMicros: bigint; token: Token }[],
): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>();
  if (asks.length === 0) return found;
  const { rows } = await db.query<{ address: string; amount: string; token: Token; id: string }>(
    `SELECT q.address, q.amount::text AS amount, q.token, c.id
       FROM unnest($2::text[], $3::bigint[], $5::text[]) AS q(address, amount, token)
       CROSS JOIN LATERAL (
         SELECT pi.id FROM payment_intents pi
          WHERE lower(pi.destination_address) = lower(q.address) AND ($4 OR pi.destination_address = q.address)
            AND pi.selected_chain = $1 AND pi.status = 'settled' AND pi.kind = 'payout' AND pi.amount_micros = q.amount AND pi.token = q.token
            AND NOT EXISTS (SELECT 1 FROM inbound_transfers r WHERE r.payment_intent_id = pi.id)
          ORDER BY pi.id LIMIT 2) c
      ORDER BY c.id`,
    [chain, asks.map((a) => a.address), asks.map((a) => a.amountMicros.toString()), familyOf(chain) === 'evm', asks.map((a) => a.token)],
  );
  for (const row of rows) {
    const key = refundAskKey(row.address, BigInt(row.amount), row.token);
    found.set(key, [...(found.get(key) ?? []), row.id]);
  }
  return found;
}

/** How listRefundCandidates keys its answer: a return pays back the same amount of the same token. */
export function refundAskKey(address: string, amountMicros: bigint, token: Token): string {
  return `${address}:${amountMicros}:${token}`;
}

/** Which of these addresses received a settled payout on `chain`: a USDC transfer from one may be a return. */
export async function readPaidAddresses(db: Queryable, chain: Chain, addresses: readonly string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const { rows } = await db.query<{ address: string }>(
    `SELECT q.address FROM unnest($2::text[]) AS q(address)
      WHERE EXISTS (SELECT 1 FROM payment_intents
                     WHERE lower(destination_address) = lower(q.address) AND ($3 OR destination_address = q.address)
                       AND selected_chain = $1 AND status = 'settled' AND kind = 'payout')`,
    [chain, addresses, familyOf(chain) === 'evm'],
  );
  return new Set(rows.map((r) => r.address));
}

export async function readInboundByTx(db: Queryable, chain: Chain, txId: string, options: { forUpdate?: boolean } = {}): Promise<InboundTransferRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM inbound_transfers WHERE chain = $1 AND tx_id = $2 ORDER BY transfer_index${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [chain, txId],
  );
  return rows.map(toRow);
}

export async function readInboundOfIntent(db: Queryable, intentId: string): Promise<InboundTransferRow | null> {
  const { rows } = await db.query<RawRow>(`SELECT ${COLUMNS} FROM inbound_transfers WHERE payment_intent_id = $1`, [intentId]);
  return rows[0] ? toRow(rows[0]) : null;
}

/** Attaches a transfer booked as funding to a payment; false when it was attached meanwhile (nothing changes). */
export async function markAttached(
  db: Queryable,
  id: number,
  attach: { paymentIntentId: string; refundTransactionId: number; reversalTransactionId: number; at: Date },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE inbound_transfers SET match_status = 'attached', payment_intent_id = $2, refund_transaction_id = $3,
            reversal_transaction_id = $4, attached_at = $5
      WHERE id = $1 AND payment_intent_id IS NULL`,
    [id, attach.paymentIntentId, attach.refundTransactionId, attach.reversalTransactionId, attach.at],
  );
  return rowCount === 1;
}

/** Newest first, `before` an id; filtered by match status when given. */
export async function listInbound(
  db: Queryable,
  filter: { statuses: readonly InboundMatchStatus[] | null; chain: Chain | null; before: number | null; limit: number },
): Promise<InboundTransferRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM inbound_transfers
      WHERE ($1::text[] IS NULL OR match_status = ANY($1)) AND ($2::text IS NULL OR chain = $2) AND ($3::bigint IS NULL OR id < $3)
      ORDER BY id DESC LIMIT $4`,
    [filter.statuses, filter.chain, filter.before, filter.limit],
  );
  return rows.map(toRow);
}
