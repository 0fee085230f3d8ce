// Inbound transfers and the deposit scanner's positions: every statement on inbound_transfers and deposit_cursors.
import type { Chain } from '../../domain/chain.js';
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

export async function depositPosition(db: Queryable, chain: Chain): Promise<string | null> {
  const { rows } = await db.query<{ position: string }>('SELECT position FROM deposit_cursors WHERE chain = $1', [chain]);
  return rows[0]?.position ?? null;
}

/** Sets the chain's first position unless one exists; the position in force. */
export async function startDepositPosition(db: Queryable, chain: Chain, position: string, at: Date): Promise<string> {
  await db.query('INSERT INTO deposit_cursors (chain, position, updated_at) VALUES ($1, $2, $3) ON CONFLICT (chain) DO NOTHING', [
    chain,
    position,
    at,
  ]);
  return (await depositPosition(db, chain))!;
}

/** Moves the position from `from` to `to`; false when another scanner moved it first (nothing changes). */
export async function moveDepositPosition(db: Queryable, chain: Chain, from: string, to: string, at: Date): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE deposit_cursors SET position = $3, updated_at = $4 WHERE chain = $1 AND position = $2', [
    chain,
    from,
    to,
    at,
  ]);
  return rowCount === 1;
}

export async function isInboundBooked(db: Queryable, chain: Chain, txId: string, index: number): Promise<boolean> {
  const { rowCount } = await db.query('SELECT 1 FROM inbound_transfers WHERE chain = $1 AND tx_id = $2 AND transfer_index = $3', [chain, txId, index]);
  return (rowCount ?? 0) > 0;
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

/** Records a booked inbound transfer. The unique key refuses a second booking of the same transfer. */
export async function insertInbound(db: Queryable, row: NewInboundTransfer): Promise<number> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO inbound_transfers (chain, tx_id, transfer_index, from_address, currency, amount, match_status, payment_intent_id,
                                    funding_transaction_id, refund_transaction_id, booked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id::text`,
    [
      row.chain,
      row.txId,
      row.index,
      row.from,
      row.currency,
      row.amount.toString(),
      row.matchStatus,
      row.paymentIntentId,
      row.fundingTransactionId,
      row.refundTransactionId,
      row.at,
    ],
  );
  return Number(rows[0]!.id);
}

/**
 * Settled payouts on `chain` to `address` of exactly `amountMicros` that no inbound transfer refunded yet: the
 * candidates of an automatic match (decision 132). At most 2: more than one is ambiguous either way. Withdrawals are
 * not payouts (decision 143): USDC coming back from a withdrawal's address is funding.
 */
export async function refundCandidates(db: Queryable, chain: Chain, address: string, amountMicros: bigint): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT pi.id FROM payment_intents pi
      WHERE lower(pi.destination_address) = lower($2) AND ($1 = 'ethereum' OR pi.destination_address = $2)
        AND pi.selected_chain = $1 AND pi.status = 'settled' AND pi.kind = 'payout' AND pi.amount_micros = $3
        AND NOT EXISTS (SELECT 1 FROM inbound_transfers r WHERE r.payment_intent_id = pi.id)
      ORDER BY pi.id LIMIT 2`,
    [chain, address, amountMicros.toString()],
  );
  return rows.map((r) => r.id);
}

/** Whether `address` received any settled payout on `chain`: a USDC transfer from it may be a return. */
export async function wasPaidTo(db: Queryable, chain: Chain, address: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM payment_intents WHERE lower(destination_address) = lower($2) AND ($1 = 'ethereum' OR destination_address = $2)
        AND selected_chain = $1 AND status = 'settled' AND kind = 'payout' LIMIT 1`,
    [chain, address],
  );
  return (rowCount ?? 0) > 0;
}

export async function findInboundByTx(db: Queryable, chain: Chain, txId: string, options: { forUpdate?: boolean } = {}): Promise<InboundTransferRow[]> {
  const { rows } = await db.query<RawRow>(
    `SELECT ${COLUMNS} FROM inbound_transfers WHERE chain = $1 AND tx_id = $2 ORDER BY transfer_index${options.forUpdate ? ' FOR UPDATE' : ''}`,
    [chain, txId],
  );
  return rows.map(toRow);
}

export async function findInboundOfIntent(db: Queryable, intentId: string): Promise<InboundTransferRow | null> {
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
