// Turns what the RPC says (transport failures, JSON-RPC errors, transaction errors) into our ChainError and
// FailureReason. Branches only on kit's stable error codes and on error classes, never on message text.
import {
  getSolanaErrorFromTransactionError,
  isSolanaError,
  SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR,
  type SolanaError,
} from '@solana/kit';
import { ChainError, type FailureReason } from '../port.js';
import {
  customErrorVerdict,
  INSTRUCTION_ERROR_VERDICTS,
  TRANSACTION_ERROR_VERDICTS,
  type InstructionRole,
  type Verdict,
} from './error-table.js';

/** A setting of the Solana adapter that cannot work (bad key, bad mint address). Raised at start-up. */
export class SolanaConfigError extends Error {
  override readonly name: string = 'SolanaConfigError';
  readonly shortMessage: string;
  readonly details: string;
  constructor(
    readonly setting: string,
    shortMessage: string,
    details: string,
  ) {
    super(`${shortMessage}: ${details}`);
    this.shortMessage = shortMessage;
    this.details = details;
  }
}

/** Where one payout's instructions sit in the transaction, so an instruction error can be pinned on one of them. */
export interface PayoutLayout {
  /** The payment it pays; null where the meta does not name it (a transaction of one payout: its memo does). */
  paymentIntentId: string | null;
  recipientAta: string;
  /** The transaction creates the recipient's token account; the treasury pays its rent. */
  createdAta: boolean;
  transferIndex: number;
  createAtaIndex: number | null;
}

/** The payouts of a transaction, in the order it pays them (one, or an on-chain batch). */
export interface InstructionLayout {
  payouts: readonly PayoutLayout[];
}

const INSTRUCTION_ERROR_FIRST = 4615000;
const INSTRUCTION_ERROR_LAST = 4615999;
const DETAILS_MAX_CHARS = 2000;

/** Classifies a transaction error already converted by kit (the cause of a preflight failure). */
export function transactionErrorVerdict(error: SolanaError, layout: InstructionLayout): Verdict {
  const code = error.context.__code;
  if (code >= INSTRUCTION_ERROR_FIRST && code <= INSTRUCTION_ERROR_LAST) {
    const context = error.context as { index?: number; code?: number };
    const role = roleOf(context.index, layout);
    if (code === SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM) return customErrorVerdict(role, context.code ?? -1);
    const verdict = INSTRUCTION_ERROR_VERDICTS[code] ?? 'unclassified';
    return typeof verdict === 'string' ? verdict : (verdict[role] ?? 'unclassified');
  }
  return TRANSACTION_ERROR_VERDICTS[code] ?? 'unclassified';
}

/** Classifies a transaction error as the RPC returns it in JSON (getSignatureStatuses, getTransaction). */
export function rawTransactionErrorVerdict(error: unknown, layout: InstructionLayout): Verdict {
  if (typeof error !== 'string' && (typeof error !== 'object' || error === null)) return 'unclassified';
  return transactionErrorVerdict(getSolanaErrorFromTransactionError(error as string | Record<string, unknown>), layout);
}

/** The reason to report for a verdict, with the default for the situation (a refused send or a landed failure). */
export function reasonOf(verdict: Verdict, fallback: FailureReason): FailureReason {
  return verdict === 'unclassified' || verdict === 'already_processed' ? fallback : verdict;
}

export function isPreflightFailure(
  error: unknown,
): error is SolanaError<typeof SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE> {
  return isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE);
}

/** Preflight logs, bounded, for ChainError details; first the payout of a batch that failed, if one did. */
export function preflightDetails(error: SolanaError, layout: InstructionLayout): string {
  const context = error.context as { logs?: unknown };
  const cause = error.cause instanceof Error ? error.cause.message : 'unknown transaction error';
  const note = isSolanaError(error.cause) ? failedPayoutNote(error.cause, layout) : undefined;
  const logs = Array.isArray(context.logs) ? context.logs.filter((l): l is string => typeof l === 'string') : [];
  return bounded([...(note ? [note] : []), cause, ...logs].join('\n'));
}

// JSON-RPC codes that prove the bytes themselves can never land, on any node: their signatures do not verify.
// Other refusals (invalid params, an unsupported version, an unhealthy node) prove only that this send did not go
// through, not that an earlier send of the same bytes, or another node, cannot still get them into a block.
const INVALID_BYTES_CODES = new Set([
  -32003, // signature verification failure
  -32013, // signature length mismatch
]);

/**
 * A failed RPC call that is not a preflight failure. Network failures and timeouts are 'rpc_timeout' with an unknown
 * outcome: for a send, the bytes may have reached the node. `refusable` marks a send, where a JSON-RPC code
 * proving the bytes invalid makes the outcome 'rejected'.
 */
export function rpcFailure(error: unknown, action: string, refusable = false): ChainError {
  if (error instanceof ChainError) return error;
  if (isTimeout(error)) {
    return new ChainError('rpc_timeout', 'unknown', `Solana RPC ${action} timed out`, { cause: error });
  }
  if (isNetworkFailure(error)) {
    return new ChainError('rpc_timeout', 'unknown', `Solana RPC ${action} failed: node unreachable`, {
      details: networkCode(error),
      cause: error,
    });
  }
  if (isSolanaError(error, SOLANA_ERROR__RPC__TRANSPORT_HTTP_ERROR)) {
    const status = error.context.statusCode;
    const reason = status === 408 || status === 504 ? 'rpc_timeout' : 'rpc_error';
    return new ChainError(reason, 'unknown', `Solana RPC ${action} failed: HTTP ${status}`, { cause: error });
  }
  if (isSolanaError(error)) {
    const code = error.context.__code;
    const outcome = refusable && INVALID_BYTES_CODES.has(code) ? 'rejected' : 'unknown';
    return new ChainError('rpc_error', outcome, `Solana RPC ${action} failed`, {
      details: bounded(`${code}: ${error.message}`),
      cause: error,
    });
  }
  return new ChainError('rpc_error', 'unknown', `Solana RPC ${action} failed`, {
    details: bounded(error instanceof Error ? error.message : String(error)),
    cause: error,
  });
}

/** The payout an instruction belongs to, and what it does for it. */
function roleOf(index: number | undefined, layout: InstructionLayout): InstructionRole {
  const payout = payoutAt(index, layout);
  if (payout === null) return 'other';
  return layout.payouts[payout]!.transferIndex === index ? 'transfer' : 'createAta';
}

function payoutAt(index: number | undefined, layout: InstructionLayout): number | null {
  if (index === undefined) return null;
  const k = layout.payouts.findIndex((p) => p.transferIndex === index || p.createAtaIndex === index);
  return k < 0 ? null : k;
}

/**
 * Which payout of a batch an instruction error is about, for the error's details ("payout 3 of 12 (pi_...)"), so that
 * the payout that failed a whole transaction can be told from those that failed with it. Undefined for a transaction
 * of one payout (nothing to tell apart) and for an error of no payout's instruction (the memo, the compute budget, the
 * transaction itself). Reasons stay those of the instruction's role: the payout is only named.
 */
export function failedPayoutNote(error: SolanaError, layout: InstructionLayout): string | undefined {
  if (layout.payouts.length < 2) return undefined;
  const code = error.context.__code;
  if (code < INSTRUCTION_ERROR_FIRST || code > INSTRUCTION_ERROR_LAST) return undefined;
  const index = (error.context as { index?: number }).index;
  const k = payoutAt(index, layout);
  if (k === null) return undefined;
  const payout = layout.payouts[k]!;
  return `instruction ${index} is payout ${k} of ${layout.payouts.length} (${payout.paymentIntentId ?? 'unnamed'}, to ${payout.recipientAta})`;
}

/** failedPayoutNote for a transaction error as the RPC returns it in JSON. */
export function rawFailedPayoutNote(error: unknown, layout: InstructionLayout): string | undefined {
  if (typeof error !== 'string' && (typeof error !== 'object' || error === null)) return undefined;
  return failedPayoutNote(getSolanaErrorFromTransactionError(error as string | Record<string, unknown>), layout);
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
}

// fetch() rejects with a TypeError whose cause is the socket error (ECONNREFUSED, ECONNRESET, UND_ERR_*).
function isNetworkFailure(error: unknown): boolean {
  return error instanceof TypeError && networkCode(error) !== undefined;
}

function networkCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

function bounded(text: string): string {
  return text.length > DETAILS_MAX_CHARS ? `${text.slice(0, DETAILS_MAX_CHARS)}…` : text;
}
