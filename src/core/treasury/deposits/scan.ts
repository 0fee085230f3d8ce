// The deposit scanner (decision 122): per chain, asks the adapter for transfers into the treasury after the stored
// position (reorg-safe only), books each once (book.ts), then moves the position. Booking and moving are separate
// commits on purpose: a crash between them rescans the same page, and the unique key (chain, tx id, index) makes the
// second booking a no-op, so nothing depends on the two committing together.
import { adapterOf } from '../../../chains/port.js';
import { advisoryXactLockText, withSessionLockIfFree, withTransaction } from '../../../db/pool.js';
import { readDepositPosition, updateDepositPosition, insertDepositPosition } from '../../../db/queries/deposits.js';
import { type Chain } from '../../../domain/chain.js';
import type { AppContext } from '../../context.js';
import { bookInbound } from './book.js';

/** Session advisory lock of the scan of CHAINS[i]: SCAN_LOCK + i (130: its decision's number before issue 26, now 122). */
const SCAN_LOCK = 7_340_215_130;

export interface ScanHooks {
  /** Tests: runs after a page is booked and before the position moves (a crash injected here must book once). */
  afterBooking?: (chain: Chain) => Promise<void>;
}

export interface ScanResult {
  booked: number;
  /** Some chain has more reorg-safe history to read right away. */
  more: boolean;
}

export async function scanDeposits(ctx: Pick<AppContext, 'pool' | 'adapters' | 'clock' | 'log'>, hooks: ScanHooks = {}): Promise<ScanResult> {
  let booked = 0;
  let more = false;
  for (const [i, chain] of Object.keys(ctx.adapters).entries()) {
    try {
      // One scanner per chain at a time across every worker process: the others skip the chain this period instead
      // of asking the node for the same page and then queueing to book it.
      await withSessionLockIfFree(ctx.pool, SCAN_LOCK + i, async () => {
        const result = await scanChain(ctx, chain, hooks);
        booked += result.booked;
        more ||= result.more;
      });
    } catch (error) {
      // One chain's node being down must not stop the other chain's deposits.
      ctx.log.warn({ err: error, chain }, 'deposit scan failed; retrying next period');
    }
  }
  return { booked, more };
}

export async function scanChain(ctx: Pick<AppContext, 'pool' | 'adapters' | 'clock' | 'log'>, chain: Chain, hooks: ScanHooks): Promise<ScanResult> {
  const adapter = adapterOf(ctx.adapters, chain);
  // A treasury created before deposits were scanned starts from where its chain stands now (decision 122).
  const position = (await readDepositPosition(ctx.pool, chain)) ?? (await insertDepositPosition(ctx.pool, chain, await adapter.inboundPosition(), ctx.clock.now()));
  // Asked with no transaction open: the node may take up to RPC_TIMEOUT_SECONDS.
  const scan = await adapter.listInboundTransfers(position);
  let booked = 0;
  if (scan.transfers.length > 0) {
    const at = ctx.clock.now();
    await withTransaction(ctx.pool, async (tx) => {
      // Two worker processes scanning one chain take turns; the unique key would refuse the loser's booking anyway.
      await advisoryXactLockText(tx, `deposits:${chain}`);
      const results = await bookInbound(tx, chain, adapter.nativeCurrency, scan.transfers, at);
      for (const [i, result] of results.entries()) {
        if (result.kind === 'already_booked') continue;
        booked++;
        const transfer = scan.transfers[i]!;
        const facts = { chain, tx_id: transfer.txId, index: transfer.index, currency: transfer.currency, amount: transfer.amountUnits.toString() };
        ctx.log.info({ ...facts, booked_as: result }, 'inbound transfer booked');
      }
    });
  }
  await hooks.afterBooking?.(chain);
  if (scan.position !== position) await updateDepositPosition(ctx.pool, chain, position, scan.position, ctx.clock.now());
  return { booked, more: scan.more };
}
