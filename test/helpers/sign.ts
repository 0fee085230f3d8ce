// Signing in tests as the execution worker does it: prepare (reads the chain, no lock), then sign in a transaction
// that allocates the nonce, if the chain has them.
import { ChainError, type ChainAdapter, type PreparedTransfer, type SignedTransfer, type TransferRequest } from '../../src/chains/port.js';
import { clearToSign, signPrepared, type SigningClearance } from '../../src/core/payments/outcomes/sign-attempts.js';
import type { Queryable } from '../../src/db/pool.js';

export async function signTransfer(adapter: ChainAdapter, db: Queryable, request: TransferRequest): Promise<SignedTransfer> {
  return signPrepared(db, adapter, await prepareOne(adapter, request), request.paymentIntentId);
}

/** A fee-bumped replacement of `stuck` (same nonce), signed, never sent. */
export async function signReplacement(
  adapter: ChainAdapter,
  db: Queryable,
  request: TransferRequest,
  stuck: SignedTransfer,
): Promise<SignedTransfer> {
  if (!adapter.prepareReplacement) throw new Error(`${adapter.chain} has no fee replacement`);
  const prepared = await adapter.prepareReplacement([request], stuck);
  return prepared.sign(db, null);
}

/** The transfer `adapter` prepares for `request` alone; its ChainError thrown, as a one-transfer call of old did. */
export async function prepareOne(adapter: ChainAdapter, request: TransferRequest): Promise<PreparedTransfer> {
  const [prepared] = await adapter.prepareTransfers([request]);
  if (prepared instanceof ChainError) throw prepared;
  return prepared!;
}

/** The clearance signAttempts needs, read in `tx` as the execution reads it; a held chain fails the test. */
export async function clearance(tx: Queryable, chain: string): Promise<SigningClearance> {
  const cleared = await clearToSign(tx, chain);
  if (cleared === null) throw new Error(`${chain} is held: a test signs only on a chain that may sign`);
  return cleared;
}
