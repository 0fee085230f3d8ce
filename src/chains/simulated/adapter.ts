// The simulated chains: real ChainAdapters whose "network" is a table in our database, so a transfer broadcast
// before a crash is still there afterwards. Replayable: every random choice hashes SIM_SEED, the chain, the transfer's
// number in its chain's signing sequence and, for a send, the try number; never a random id, so the same seed and the
// same operations give the same outcomes. Truthful like a node: bytes it never took are 'unknown' (sent again they may
// land); 'expired' only for bytes it refused, which it then refuses for good. Faults: SIM_FAILURE_RATE / SIM_STUCK_RATE.
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import type { Clock } from '../../clock.js';
import type { ChainSettings } from '../../config.js';
import { withTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { isWellFormedAddress, sameAddress } from '../../domain/addresses.js';
import { familyOf } from '../../domain/chain.js';
import { currencyOf, DEFAULT_TOKEN, TOKEN_PRESETS, type Token, type TokenCurrency } from '../../domain/token.js';
import { nativeToUsd } from '../../money.js';
import {
  ChainError,
  type Chain,
  type ChainAdapter,
  type FailureReason,
  type FeeEstimate,
  type HealthProbe,
  type InboundScan,
  type TreasuryActivity,
  type PreparedTransfer,
  type SignedTransfer,
  type TransferRequest,
  type TxStatus,
} from '../port.js';
import { SIMULATED_BATCH_TRANSFER_FEE_PERCENT, SIMULATED_BATCH_TRANSFERS_MAX, SIMULATED_INBOUND_PAGE_TRANSFERS } from '../../bounds.js';

export interface SimulatedOptions {
  settings: ChainSettings;
  db: Pool;
  clock: Clock;
  seed: string;
  failureRate: number;
  stuckRate: number;
  /** Seconds to finality for both chains; null: chain-like timings. */
  confirmSeconds: number | null;
  /** Each token's balance when the network is created (SIM_TREASURY_USDC, the same for every token: decision 236). */
  openingUsdcMicros: bigint;
}

/** A simulated chain: a ChainAdapter plus the genesis of its network. */
export interface SimulatedAdapter extends ChainAdapter {
  /** Creates the treasury wallet with its opening balances, once per database; later calls change nothing. */
  genesis(at: Date): Promise<void>;
}

interface ChainProfile {
  includedAfterSeconds: number;
  finalAfterSeconds: number;
  confirmationsToFinal: number;
  baseFeeNative: bigint;
  /** Native currency the treasury starts with, for fees. */
  openingNative: bigint;
}

/** A simulated chain times and prices its transfers as the real one does (src/domain/chain-presets.ts). */
function profileOf(settings: ChainSettings): ChainProfile {
  const confirmationsToFinal = settings.finality === 'confirmations' ? settings.confirmations : Math.max(1, Math.round(settings.finalSeconds / settings.blockSeconds));
  const wholeUnits = (units: bigint) => units * 10n ** BigInt(settings.nativeDecimals);
  return {
    includedAfterSeconds: settings.blockSeconds,
    finalAfterSeconds: settings.finalSeconds,
    confirmationsToFinal,
    baseFeeNative: settings.simulatedFeeNative,
    openingNative: wholeUnits(settings.family === 'solana' ? 1000n : 100n),
  };
}

const BROADCAST_FAILURES: FailureReason[] = ['insufficient_gas', 'rpc_timeout', 'nonce_conflict'];

/** What a transaction of `transfers` payouts costs when one of its own costs `singleFee`. */
function batchFee(singleFee: bigint, transfers: number): bigint {
  return singleFee + (singleFee * SIMULATED_BATCH_TRANSFER_FEE_PERCENT * BigInt(transfers - 1)) / 100n;
}

/** A deterministic number in [0, 1) from the seed and some labels. */
function roll(seed: string, ...labels: string[]): number {
  const digest = createHash('sha256').update([seed, ...labels].join('\u0000')).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

function digest(...parts: string[]): Buffer {
  return createHash('sha256').update(parts.join('\u0000')).digest();
}

export function simulatedTreasuryAddress(chain: Chain, seed: string): string {
  const bytes = digest(seed, 'treasury', chain);
  return familyOf(chain) === 'evm' ? `0x${bytes.subarray(0, 20).toString('hex')}` : getBase58Decoder().decode(bytes);
}

/** One payout of a simulated transaction. */
interface SimulatedTransfer {
  to: string;
  amount: string;
  /** The payment intent: keeps tx ids unique across databases and lets tests count payouts per intent (sim_payouts). */
  ref: string;
}

/**
 * The simulated wire format: what signAll writes and the node reads back. A transaction pays `transfers` (an on-chain
 * batch pays several); bytes signed before batches named their one transfer's fields at the top instead.
 */
type SimulatedTx = {
  chain: Chain;
  from: string;
  /** This transaction's number in its chain's signing sequence; what the rolls hash. Absent in bytes signed before it. */
  chain_sequence?: number;
  /** The token every transfer of it moves; absent: usdc (so a USDC transaction's bytes and tx id are as before tokens). */
  token?: Token;
} & (
  | { transfers: SimulatedTransfer[] }
  | SimulatedTransfer
);

function transfersOf(body: SimulatedTx): SimulatedTransfer[] {
  return 'transfers' in body ? body.transfers : [{ to: body.to, amount: body.amount, ref: body.ref }];
}

/** What the node does with one send of bytes it has not taken yet. */
type SendOutcome = { kind: 'accepted' } | { kind: 'refused'; reason: FailureReason } | { kind: 'timeout'; landed: boolean };

/** The send puts the bytes on the chain: taken, or timed out after the node took them. */
function lands(outcome: SendOutcome): boolean {
  return outcome.kind === 'accepted' || (outcome.kind === 'timeout' && outcome.landed);
}

interface StatusRow {
  will_stick: boolean | null;
  included_at: Date | null;
  final_at: Date | null;
  fee_native: string | null;
  refused_reason: string | null;
}

const RECORD_SQL =
  'INSERT INTO sim_transactions (tx_id, chain, raw_tx, to_address, amount_micros, fee_native, will_stick, submitted_at, included_at, final_at, token)';

/** What each prepared transaction pays, for its signature (any adapter of the process may sign a batch, src/core/payments/execute/sign.ts). */
const requests = new WeakMap<PreparedTransfer, readonly TransferRequest[]>();

export function createSimulatedAdapter(options: SimulatedOptions): SimulatedAdapter {
  const { settings, db, clock, seed } = options;
  const chain = settings.name;
  const profile = profileOf(settings);
  const includedAfter = options.confirmSeconds === null ? profile.includedAfterSeconds : options.confirmSeconds / 4;
  const finalAfter = options.confirmSeconds === null ? profile.finalAfterSeconds : options.confirmSeconds;
  const address = simulatedTreasuryAddress(chain, seed);

  /** What the node says about one transfer, from its row, at `now`. Pure. */
  function statusOf(row: StatusRow, now: number): TxStatus {
    if (row.included_at === null || row.final_at === null || row.fee_native === null) {
      // Refused bytes are refused for good (see broadcast), so they can provably never land. Anything else the node
      // does not hold, a timed-out send included, may still land if sent again.
      return row.refused_reason !== null ? { state: 'expired' } : { state: 'unknown' };
    }
    if (row.will_stick || now < row.included_at.getTime()) return { state: 'pending' };
    if (now < row.final_at.getTime()) {
      const span = Math.max(1, row.final_at.getTime() - row.included_at.getTime());
      const progress = (now - row.included_at.getTime()) / span;
      return { state: 'included', confirmations: 1 + Math.floor(progress * (profile.confirmationsToFinal - 1)) };
    }
    return { state: 'final', feeNative: BigInt(row.fee_native), finalAt: row.final_at };
  }

  /** The labels a transfer's rolls hash: its place in the chain's sequence, so a replay rolls the same numbers. */
  function rollKey(signed: SignedTransfer): string[] {
    const body = JSON.parse(signed.rawTx) as SimulatedTx;
    return body.chain_sequence === undefined ? [signed.txId] : [chain, String(body.chain_sequence)];
  }

  /** The try-th send of a transfer the node has neither taken nor refused. Pure. */
  function decideSend(key: string[], tryNumber: number): SendOutcome {
    const attempt = String(tryNumber);
    if (roll(seed, ...key, 'fail', attempt) >= options.failureRate) return { kind: 'accepted' };
    const reason = BROADCAST_FAILURES[Math.floor(roll(seed, ...key, 'reason', attempt) * BROADCAST_FAILURES.length)]!;
    // A timeout is an unknown outcome: half the time the node did take the transaction.
    if (reason === 'rpc_timeout') return { kind: 'timeout', landed: roll(seed, ...key, 'landed', attempt) < 0.5 };
    return { kind: 'refused', reason };
  }

  function feeFor(key: string[], transfers: number, token: Token): bigint {
    // +-20% around the token's base fee, fixed per transaction.
    const base = baseFeeOf(token);
    const jitter = BigInt(Math.floor(roll(seed, ...key, 'fee') * 400)) - 200n;
    return batchFee(base + (base * jitter) / 1000n, transfers);
  }

  /** An EVM token transfer costs its own gas (USDT more than USDC); Solana charges per signature, whatever the token. */
  function baseFeeOf(token: Token): bigint {
    if (settings.family !== 'evm' || token === 'usdc') return profile.baseFeeNative;
    return (profile.baseFeeNative * TOKEN_PRESETS[token].evmTransferGas) / TOKEN_PRESETS.usdc.evmTransferGas;
  }

  function txIdFor(rawTx: string): string {
    const bytes = digest(seed, 'tx', rawTx);
    if (settings.family === 'evm') return `0x${bytes.toString('hex')}`;
    return getBase58Decoder().decode(Buffer.concat([bytes, digest(seed, 'tx2', rawTx)]));
  }

  return {
    chain,
    kind: 'simulated',
    nativeCurrency: settings.nativeCurrency,
    nativeDecimals: settings.nativeDecimals,
    typicalFinalitySeconds: finalAfter,

    treasuryAddress: () => address,

    // The same rules as the real adapters (src/domain/addresses.ts). The treasury cannot pay itself: nothing would
    // move, yet the books would show a payout.
    isValidAddress: (candidate) =>
      !sameAddress(chain, candidate, address) && isWellFormedAddress(chain, candidate),

    async estimateFee(token: Token = DEFAULT_TOKEN): Promise<FeeEstimate> {
      const feeNative = baseFeeOf(token);
      return { feeNative, feeUsd: nativeToUsd(feeNative, settings.nativeDecimals, settings.nativeUsdPrice) };
    },

    // The requests of each token go out in transactions of up to SIMULATED_BATCH_TRANSFERS_MAX, in order (a transaction
    // moves one token): one object at the places of the requests it pays.
    async prepareTransfers(batch: readonly TransferRequest[]): Promise<PreparedTransfer[]> {
      const answers: PreparedTransfer[] = new Array<PreparedTransfer>(batch.length);
      const places = new Map<Token, number[]>();
      batch.forEach((request, k) => {
        const token = request.token ?? DEFAULT_TOKEN;
        places.set(token, [...(places.get(token) ?? []), k]);
      });
      for (const [token, ks] of places) {
        for (let i = 0; i < ks.length; i += SIMULATED_BATCH_TRANSFERS_MAX) {
          const paidAt = ks.slice(i, i + SIMULATED_BATCH_TRANSFERS_MAX);
          const feeNative = batchFee(baseFeeOf(token), paidAt.length);
          const prepared: PreparedTransfer = {
            feeEstimate: { feeNative, feeUsd: nativeToUsd(feeNative, settings.nativeDecimals, settings.nativeUsdPrice) },
            async sign(tx: Queryable): Promise<SignedTransfer> {
              return (await signAll(tx, [prepared]))[0]!;
            },
          };
          requests.set(prepared, paidAt.map((k) => batch[k]!));
          for (const k of paidAt) answers[k] = prepared;
        }
      }
      return answers;
    },

    signAll: (tx, prepared) => signAll(tx, prepared),

    async broadcast(signed: SignedTransfer): Promise<void> {
      const first = decideSend(rollKey(signed), 1);
      // A first send (nearly every send) is decided before it reaches the database, from its try number 1, and one
      // statement, a transaction of its own, writes its tries row with the decision (the refusal, or the chain's
      // record): a send that finds no tries row costs one round trip, not three (decision 141).
      const { rows: firstSend } = await db.query<{ inserted: number }>(
        `WITH t AS (
           INSERT INTO sim_broadcast_tries (tx_id, tries, refused_reason) VALUES ($1, 1, $12::text)
           ON CONFLICT (tx_id) DO NOTHING RETURNING tries
         ), recorded AS (
           ${RECORD_SQL} SELECT $1::text, $2::text, $3::text, $4::text, $5::bigint, $6::numeric, $7::boolean, $8::timestamptz, $9::timestamptz, $10::timestamptz, $11::text
            WHERE $13::boolean AND EXISTS (SELECT 1 FROM t)
           ON CONFLICT (tx_id) DO NOTHING
         )
         SELECT COUNT(*)::int AS inserted FROM t`,
        [...recordParams(signed), first.kind === 'refused' ? first.reason : null, lands(first)],
      );
      const { outcome, tries } = firstSend[0]!.inserted === 1 ? { outcome: first, tries: 1 } : await resend(signed);
      if (outcome.kind === 'timeout') {
        throw new ChainError('rpc_timeout', 'unknown', 'simulated RPC timed out', { details: `try ${tries}` });
      }
      if (outcome.kind === 'refused') {
        throw new ChainError(outcome.reason, 'rejected', `simulated node rejected the transaction: ${outcome.reason}`, {
          details: `try ${tries}`,
        });
      }
    },

    async getStatuses(signed: readonly SignedTransfer[]): Promise<TxStatus[]> {
      if (signed.length === 0) return [];
      // One statement, one snapshot: a send commits its tries row together with its outcome, so a send in progress
      // reads as not there yet ('unknown'), never as refused.
      const { rows } = await db.query<StatusRow>(
        `SELECT t.will_stick, t.included_at, t.final_at, t.fee_native::text, b.refused_reason
           FROM unnest($1::text[]) WITH ORDINALITY AS asked(tx_id, n)
           LEFT JOIN sim_transactions t ON t.tx_id = asked.tx_id
           LEFT JOIN sim_broadcast_tries b ON b.tx_id = asked.tx_id
          ORDER BY asked.n`,
        [signed.map((s) => s.txId)],
      );
      const now = clock.now().getTime();
      return rows.map((row) => statusOf(row, now));
    },

    async head(): Promise<string> {
      // The simulated network has no blocks: its head is the last moment at which one of its transfers was included
      // or became final. It changes exactly when a transfer may have moved, as a real head does.
      const { rows } = await db.query<{ head: string | null }>(
        `SELECT GREATEST(
                  (SELECT MAX(final_at) FROM sim_transactions WHERE chain = $1 AND final_at <= $2),
                  (SELECT MAX(included_at) FROM sim_transactions WHERE chain = $1 AND included_at <= $2))::text AS head`,
        [chain, clock.now()],
      );
      return rows[0]?.head ?? 'genesis';
    },

    async probe(): Promise<HealthProbe> {
      // The simulated RPC itself always answers: SIM_FAILURE_RATE injects broadcast failures, not outages.
      const at = clock.now().toISOString();
      return {
        ok: true,
        latencyMs: 20 + Math.floor(roll(seed, chain, 'latency', at) * 60),
        fee: await this.estimateFee(),
        finalitySeconds: finalAfter,
        congestion: Math.round(roll(seed, chain, 'congestion', at) * 30) / 100,
      };
    },

    treasuryTokenBalance: async (token) => (await walletBalances(token)).tokenMicros,

    treasuryNativeBalance: async () => (await walletBalances(DEFAULT_TOKEN)).nativeUnits,

    async inboundPosition(): Promise<string> {
      const { rows } = await db.query<{ last: string }>('SELECT last_external_sequence::text AS last FROM sim_wallets WHERE chain = $1', [chain]);
      return rows[0]?.last ?? '0';
    },

    // The simulated network keeps its state in the books' own database (decision 29): a commit the database lost took
    // the network's record of the transfer with it, so the books can never be behind this chain. Trivially matched.
    async treasuryTransactions(): Promise<TreasuryActivity> {
      return { transactions: [], complete: true, nonces: null, mark: '0', quiet: true };
    },

    async listInboundTransfers(position: string): Promise<InboundScan> {
      // Simulated transfers from outside are final once written (the simulator has no reorgs). Numbers commit in order
      // (simulate-transfer.ts takes them under the wallet row's lock), so reading past one never skips a later commit.
      const { rows } = await db.query<{
        sequence: string;
        tx_id: string;
        from_address: string;
        to_address: string;
        currency: TokenCurrency | 'native';
        amount: string;
      }>(
        `SELECT sequence::text, tx_id, from_address, to_address, currency, amount::text FROM sim_external_transfers
          WHERE chain = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
        [chain, position, SIMULATED_INBOUND_PAGE_TRANSFERS + 1],
      );
      const page = rows.slice(0, SIMULATED_INBOUND_PAGE_TRANSFERS);
      return {
        transfers: page.flatMap((r) => (sameAddress(chain, r.to_address, address) ? [{ txId: r.tx_id, index: 0, from: r.from_address, currency: r.currency, amountUnits: BigInt(r.amount) }] : [])),
        position: page.at(-1)?.sequence ?? position,
        more: rows.length > SIMULATED_INBOUND_PAGE_TRANSFERS,
      };
    },

    async genesis(at: Date): Promise<void> {
      await db.query(
        `INSERT INTO sim_wallets (chain, address, initial_usdc_micros, initial_native, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (chain) DO NOTHING`,
        [chain, address, options.openingUsdcMicros.toString(), profile.openingNative.toString(), at],
      );
    },
  };

  /**
   * The wallet as the network sees it now: its opening balances less what final transfers took (amounts and fees),
   * plus what outside transfers brought in.
   */
  async function walletBalances(token: Token): Promise<{ tokenMicros: bigint; nativeUnits: bigint }> {
    const { rows } = await db.query<{ usdc: string; native: string }>(
      `WITH sent AS (
         SELECT COALESCE(SUM(amount_micros) FILTER (WHERE token = $5), 0) AS usdc, COALESCE(SUM(fee_native), 0) AS native FROM sim_transactions
          WHERE chain = $1 AND NOT will_stick AND final_at <= $2
       ), received AS (
         SELECT COALESCE(SUM(amount) FILTER (WHERE currency = $6), 0) AS usdc,
                COALESCE(SUM(amount) FILTER (WHERE currency = 'native'), 0) AS native
           FROM sim_external_transfers
          WHERE chain = $1 AND CASE WHEN $4 THEN lower(to_address) = lower($3) ELSE to_address = $3 END
       )
       SELECT (w.initial_usdc_micros - sent.usdc + received.usdc)::text AS usdc,
              (w.initial_native - sent.native + received.native)::text AS native
         FROM sim_wallets w, sent, received
        WHERE w.chain = $1`,
      [chain, clock.now(), address, settings.family === 'evm', token, currencyOf(token)],
    );
    return { tokenMicros: BigInt(rows[0]?.usdc ?? '0'), nativeUnits: BigInt(rows[0]?.native ?? '0') };
  }

  /**
   * Numbers the transfers under the wallet row's lock in the caller's transaction, one statement for all: signatures
   * of one chain are ordered, and a refused or rolled-back signature gives its number back, so a replay numbers its
   * transfers the same way.
   */
  async function signAll(tx: Queryable, prepared: readonly PreparedTransfer[]): Promise<SignedTransfer[]> {
    if (prepared.length === 0) return [];
    const { rows } = await tx.query<{ last_sequence: string }>(
      'UPDATE sim_wallets SET last_sequence = last_sequence + $2 WHERE chain = $1 RETURNING last_sequence::text',
      [chain, prepared.length],
    );
    if (!rows[0]) throw new Error(`no simulated ${chain} wallet: createAdapters runs its genesis at start-up`);
    const first = Number(rows[0].last_sequence) - prepared.length + 1;
    return prepared.map((p, i) => {
      const paid = requests.get(p);
      if (!paid) throw new Error(`a transfer no simulated adapter prepared`);
      const token = paid[0]?.token ?? DEFAULT_TOKEN;
      const body: SimulatedTx = {
        chain,
        from: address,
        transfers: paid.map((request) => ({ to: request.to, amount: request.amountMicros.toString(), ref: request.paymentIntentId })),
        chain_sequence: first + i,
        ...(token === DEFAULT_TOKEN ? {} : { token }),
      };
      const rawTx = JSON.stringify(body);
      return { txId: txIdFor(rawTx), rawTx, meta: {} };
    });
  }

  /**
   * A send of bytes sent before (after a timeout or a refusal, or at the same time as another send of them, which
   * committed first): decided under the tries row's lock from what the earlier sends left. The lock orders concurrent
   * resends, and each decision commits with what it decided (refusal or record): a send never sees an earlier one half
   * done, and getStatuses never sees it at all.
   */
  async function resend(signed: SignedTransfer): Promise<{ outcome: SendOutcome; tries: number }> {
    return withTransaction(db, async (tx) => {
      const { rows } = await tx.query<{ tries: number; refused_reason: FailureReason | null }>(
        'UPDATE sim_broadcast_tries SET tries = tries + 1 WHERE tx_id = $1 RETURNING tries, refused_reason',
        [signed.txId],
      );
      const { tries, refused_reason: refusedBefore } = rows[0]!;
      if (refusedBefore) return { outcome: { kind: 'refused', reason: refusedBefore }, tries };
      // The chain already has these bytes: resending them is harmless.
      if (await isRecorded(tx, signed.txId)) return { outcome: { kind: 'accepted' }, tries };
      const outcome = decideSend(rollKey(signed), tries);
      if (outcome.kind === 'refused') {
        await tx.query('UPDATE sim_broadcast_tries SET refused_reason = $2 WHERE tx_id = $1', [signed.txId, outcome.reason]);
      } else if (lands(outcome)) {
        await tx.query(`${RECORD_SQL} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (tx_id) DO NOTHING`, recordParams(signed));
      }
      return { outcome, tries };
    });
  }

  async function isRecorded(q: Queryable, txId: string): Promise<boolean> {
    return ((await q.query('SELECT 1 FROM sim_transactions WHERE tx_id = $1', [txId])).rowCount ?? 0) > 0;
  }

  /** The chain's record of a transfer it took: when it was sent, when it is included and final. */
  function recordParams(signed: SignedTransfer): unknown[] {
    const body = JSON.parse(signed.rawTx) as SimulatedTx;
    const transfers = transfersOf(body);
    const token = body.token ?? DEFAULT_TOKEN;
    const key = rollKey(signed);
    const now = clock.now();
    return [
      signed.txId,
      chain,
      signed.rawTx,
      transfers.length === 1 ? transfers[0]!.to : null,
      transfers.reduce((sum, t) => sum + BigInt(t.amount), 0n).toString(),
      feeFor(key, transfers.length, token).toString(),
      roll(seed, ...key, 'stick') < options.stuckRate,
      now,
      new Date(now.getTime() + includedAfter * 1000),
      new Date(now.getTime() + finalAfter * 1000),
      token,
    ];
  }
}
