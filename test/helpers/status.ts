// One transfer's status through the port, which asks about one transfer or many in one call.
import type { ChainAdapter, SignedTransfer, TxStatus } from '../../src/chains/port.js';

export async function statusOf(adapter: Pick<ChainAdapter, 'getStatuses'>, signed: SignedTransfer): Promise<TxStatus> {
  const [status] = await adapter.getStatuses([signed]);
  return status!;
}
