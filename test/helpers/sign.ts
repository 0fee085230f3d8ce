// Signing in tests as the execution worker does it: prepare (reads the chain, no lock), then sign in a transaction
// that allocates the nonce, if the chain has them.
import type { ChainAdapter, SignedTransfer, TransferRequest } from '../../src/chains/port.js';
import { signPrepared } from '../../src/core/lifecycle/sign-attempts.js';
import type { Queryable } from '../../src/db/pool.js';

export async function signTransfer(adapter: ChainAdapter, db: Queryable, request: TransferRequest): Promise<SignedTransfer> {
  const prepared = await adapter.prepareTransfer(request);
  return signPrepared(db, adapter, prepared, request.paymentIntentId);
}

/** A fee-bumped replacement of `stuck` (same nonce), signed, never sent. */
export async function signReplacement(
  adapter: ChainAdapter,
  db: Queryable,
  request: TransferRequest,
  stuck: SignedTransfer,
): Promise<SignedTransfer> {
  if (!adapter.prepareReplacement) throw new Error(`${adapter.chain} has no fee replacement`);
  const prepared = await adapter.prepareReplacement(request, stuck);
  return prepared.sign(db, null);
}
