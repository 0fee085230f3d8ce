// Maps what an Ethereum node or the HTTP path to it answered onto our FailureReason, like a Hyperswitch
// `transformers` file: first classify the error into a closed set of kinds, then one exhaustive table decides
// reason and outcome. JSON-RPC nodes give no stable codes for transaction-pool errors (geth answers -32000 for all
// of them, anvil -32003), so classification has to read the node's message; it reuses viem's own patterns
// (NonceTooLowError.nodeMessage, ...) and is the only place in the adapter that looks at message text.
import {
  BaseError,
  ExecutionRevertedError,
  FeeCapTooHighError,
  FeeCapTooLowError,
  HttpRequestError,
  InsufficientFundsError,
  IntrinsicGasTooHighError,
  IntrinsicGasTooLowError,
  NonceTooHighError,
  NonceTooLowError,
  TimeoutError,
  TipAboveFeeCapError,
  TransactionTypeNotSupportedError,
} from 'viem';
import { ChainError, type FailureReason } from '../port.js';

export type EthereumErrorKind =
  | 'timeout' // no answer within rpcTimeoutSeconds
  | 'unreachable' // connection refused, DNS, reset: no HTTP answer at all
  | 'http_error' // an HTTP status other than 2xx/429 (a proxy or provider in front of the node)
  | 'rate_limited' // HTTP 429 or JSON-RPC -32005
  | 'already_known' // the pool already holds these exact bytes
  | 'nonce_too_low' // the account has already used this nonce (maybe with these very bytes)
  | 'replacement_underpriced' // another transaction with this nonce is pending and pays more
  | 'nonce_too_high' // a provider that refuses nonce gaps instead of queueing
  | 'insufficient_funds_for_gas' // the treasury cannot pay gas x maxFeePerGas in ETH
  | 'fee_cap_too_low' // maxFeePerGas below the current base fee
  | 'fee_invalid' // tip above fee cap, fee cap above 2^256: our bug
  | 'gas_limit_invalid' // below intrinsic gas or above the block gas limit
  | 'execution_reverted' // the node simulated the call and it reverts
  | 'invalid_transaction' // undecodable bytes, wrong chain id, unsupported type
  | 'node_error'; // anything else the node said

interface Mapping {
  reason: FailureReason;
  /** rejected only when the node certainly did not take the bytes; when in doubt, unknown (resend, never re-sign). */
  outcome: 'rejected' | 'unknown';
  summary: string;
}

// `satisfies Record<...>` makes adding a kind without deciding its mapping a type error.
const MAPPING = {
  timeout: { reason: 'rpc_timeout', outcome: 'unknown', summary: 'the node did not answer in time' },
  unreachable: { reason: 'rpc_timeout', outcome: 'unknown', summary: 'the node could not be reached' },
  http_error: { reason: 'rpc_error', outcome: 'unknown', summary: 'the RPC endpoint answered with an HTTP error' },
  rate_limited: { reason: 'rpc_error', outcome: 'unknown', summary: 'the RPC endpoint is rate limiting us' },
  // Only reached when the node does not actually have our hash (see broadcast.ts); an inconsistent load-balanced
  // endpoint is the likely cause, so keep the bytes and resend.
  already_known: { reason: 'rpc_error', outcome: 'unknown', summary: 'the node claims to know a transaction it cannot find' },
  // Only reached when this node does not find our hash (see broadcast.ts). Behind a load balancer another backend may
  // hold, or have mined, these very bytes while this one lags: the status read at final depth decides, and nothing is
  // re-signed on a fresh nonce meanwhile (decision 35).
  nonce_too_low: { reason: 'nonce_conflict', outcome: 'unknown', summary: 'the node reports the nonce already used' },
  replacement_underpriced: {
    reason: 'nonce_conflict',
    outcome: 'unknown',
    summary: 'the node holds another transaction on this nonce with a higher fee',
  },
  // These bytes can still land once the gap below them fills: keep them.
  nonce_too_high: { reason: 'rpc_error', outcome: 'unknown', summary: 'the node refused a nonce above the next one' },
  insufficient_funds_for_gas: { reason: 'insufficient_gas', outcome: 'rejected', summary: 'the treasury lacks ETH for gas' },
  fee_cap_too_low: { reason: 'rpc_error', outcome: 'rejected', summary: 'maxFeePerGas is below the current base fee' },
  fee_invalid: { reason: 'internal_error', outcome: 'rejected', summary: 'the transaction fees are inconsistent' },
  gas_limit_invalid: { reason: 'rpc_error', outcome: 'rejected', summary: 'the gas limit is out of bounds' },
  execution_reverted: { reason: 'reverted', outcome: 'rejected', summary: 'the transfer would revert' },
  invalid_transaction: { reason: 'rpc_error', outcome: 'rejected', summary: 'the node refused the transaction as invalid' },
  node_error: { reason: 'rpc_error', outcome: 'unknown', summary: 'the node answered with an unclassified error' },
} as const satisfies Record<EthereumErrorKind, Mapping>;

const JSON_RPC_EXECUTION_REVERTED = 3;
const JSON_RPC_INVALID_PARAMS = -32602;
const JSON_RPC_LIMIT_EXCEEDED = -32005;
const MAX_CAUSE_DEPTH = 16;

const ALREADY_KNOWN = /already known|already imported|known transaction/;
const REPLACEMENT_UNDERPRICED = /replacement transaction underpriced|replacement fee too low|replacement underpriced/;
const INVALID_TRANSACTION = /invalid chain id|invalid sender|failed to decode|rlp|invalid signature|invalid transaction/;
const RATE_LIMITED = /rate limit|too many requests|exceeded .*capacity/;

/** Every link of an error's cause chain, outermost first. */
function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && chain.length < MAX_CAUSE_DEPTH; e = (e as { cause?: unknown }).cause) {
    chain.push(e);
  }
  return chain;
}

export function classifyEthereumError(error: unknown): EthereumErrorKind {
  const chain = causeChain(error);
  if (chain.some((e) => e instanceof TimeoutError || (e instanceof Error && e.name === 'TimeoutError'))) return 'timeout';
  const http = chain.find((e): e is HttpRequestError => e instanceof HttpRequestError);
  if (http) {
    if (http.status === undefined) return 'unreachable';
    return http.status === 429 ? 'rate_limited' : 'http_error';
  }
  const codes = chain.map((e) => (e as { code?: unknown }).code).filter((code): code is number => typeof code === 'number');
  const text = chain
    .map((e) => (e instanceof BaseError ? (e.details ?? e.shortMessage) : e instanceof Error ? e.message : ''))
    .join('\n')
    .toLowerCase();

  if (ALREADY_KNOWN.test(text)) return 'already_known';
  if (REPLACEMENT_UNDERPRICED.test(text)) return 'replacement_underpriced';
  if (NonceTooLowError.nodeMessage.test(text)) return 'nonce_too_low';
  if (NonceTooHighError.nodeMessage.test(text)) return 'nonce_too_high';
  if (InsufficientFundsError.nodeMessage.test(text)) return 'insufficient_funds_for_gas';
  if (FeeCapTooLowError.nodeMessage.test(text)) return 'fee_cap_too_low';
  if (FeeCapTooHighError.nodeMessage.test(text) || TipAboveFeeCapError.nodeMessage.test(text)) return 'fee_invalid';
  if (IntrinsicGasTooLowError.nodeMessage.test(text) || IntrinsicGasTooHighError.nodeMessage.test(text)) {
    return 'gas_limit_invalid';
  }
  if (codes.includes(JSON_RPC_EXECUTION_REVERTED) || ExecutionRevertedError.nodeMessage.test(text)) {
    return 'execution_reverted';
  }
  if (codes.includes(JSON_RPC_LIMIT_EXCEEDED) || RATE_LIMITED.test(text)) return 'rate_limited';
  if (
    codes.includes(JSON_RPC_INVALID_PARAMS) ||
    TransactionTypeNotSupportedError.nodeMessage.test(text) ||
    INVALID_TRANSACTION.test(text)
  ) {
    return 'invalid_transaction';
  }
  return 'node_error';
}

/** The node's own words, for ChainError.details: viem's `details` of the deepest link that has one. */
function nodeDetails(error: unknown): string | undefined {
  const withDetails = causeChain(error).filter((e): e is BaseError => e instanceof BaseError && Boolean(e.details));
  const deepest = withDetails.at(-1);
  if (deepest) return deepest.details;
  return error instanceof Error ? error.message : undefined;
}

export interface ToChainErrorOptions {
  /** What we were doing, e.g. 'eth_sendRawTransaction'. */
  operation: string;
  /**
   * Overrides the table's outcome when the context knows better: 'rejected' while preparing a transfer (nothing was
   * sent), 'unknown' when a follow-up lookup failed and the bytes may well be on the node.
   */
  outcome?: 'rejected' | 'unknown';
}

export function toChainError(error: unknown, options: ToChainErrorOptions): ChainError {
  if (error instanceof ChainError) return error;
  const kind = classifyEthereumError(error);
  return chainErrorOf(kind, options, error);
}

export function chainErrorOf(kind: EthereumErrorKind, options: ToChainErrorOptions, cause?: unknown, details?: string) {
  const mapping: Mapping = MAPPING[kind];
  return new ChainError(
    mapping.reason,
    options.outcome ?? mapping.outcome,
    `${options.operation} failed: ${mapping.summary}`,
    { details: details ?? nodeDetails(cause), cause },
  );
}
