// What a difference between a treasury's books and its wallet means (decisions 116, 117). Pure. The books hold
// available + reserved + in-flight USDC until a payout settles, while the wallet loses a transfer's amount as soon as
// the chain includes it; so the wallet may be short of the books by what has landed and is not settled yet, and by
// nothing else. A transfer merely signed, or pending in a node, has moved nothing.
import type { Chain, TxStatus } from './chain.js';
import { transferVerdict } from './transfer-verdict.js';

export type ReconciliationStatus = 'ok' | 'in_flight' | 'mismatch';

/** A transfer of a payment (or withdrawal) the books still count in flight, with what its chain says about it. */
export interface CheckedTransfer {
  paymentIntentId: string;
  amountMicros: bigint;
  status: TxStatus;
}

/**
 * Whether the chain must be asked about the transfers in flight: only a shortfall no larger than what is in flight
 * could be explained by them. Equal balances need no explanation, and a surplus or a larger shortfall has none.
 */
export function needsLandedTransfers(differenceMicros: bigint, inFlightMicros: bigint): boolean {
  return differenceMicros < 0n && -differenceMicros <= inFlightMicros;
}

/**
 * What landed on chain and is not booked yet: the amount of every payment one of whose transfers the chain reports
 * included or final. A payment counts once: a fee-bumped replacement and the transfer it replaced share a nonce, so
 * at most one of them moves the money.
 */
export function landedUnbookedMicros(chain: Chain, transfers: readonly CheckedTransfer[]): bigint {
  const landed = new Map<string, bigint>();
  for (const transfer of transfers) {
    const kind = transferVerdict(transfer.status, { chain }).kind;
    if (kind === 'included' || kind === 'final') landed.set(transfer.paymentIntentId, transfer.amountMicros);
  }
  let total = 0n;
  for (const amount of landed.values()) total += amount;
  return total;
}

/** ok: the wallet holds what the books say. in_flight: short by no more than what landed unbooked. mismatch: else. */
export function reconciliationStatus(differenceMicros: bigint, landedMicros: bigint): ReconciliationStatus {
  if (differenceMicros === 0n) return 'ok';
  return differenceMicros < 0n && -differenceMicros <= landedMicros ? 'in_flight' : 'mismatch';
}
