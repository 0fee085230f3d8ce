// Transfers from outside (deposits, recipients' returns) as both simulated chains keep them: mined in the current
// block, in the balances at once, listed to the treasury's scan once final, a page at a time.
import type { ChainFamily } from '../../src/domain/chain.js';
import type { Balances } from './common.js';
import type { ExternalTransferInput } from './types.js';
import { idOf } from './wire.js';

interface Inbound {
  sequence: number;
  block: number;
  txId: string;
  from: string;
  to: string;
  currency: 'USDC' | 'native';
  amount: bigint;
}

export class InboundLog {
  private readonly entries: Inbound[] = [];

  constructor(
    private readonly family: ChainFamily,
    private readonly chain: string,
    private readonly balances: Balances,
    /** The scan's index of a native transfer: EVM reports -1 (a call's value), Solana 1 (after the token transfer). */
    private readonly nativeIndex: number,
  ) {}

  record(transfer: ExternalTransferInput, block: number): string {
    if (transfer.amountUnits <= 0n) throw new RangeError('a transfer moves a positive amount');
    const sequence = this.entries.length + 1;
    const txId = idOf(this.family, 'external', this.chain, String(sequence));
    if (transfer.currency === 'USDC') this.balances.addUsdc(transfer.to, transfer.amountUnits);
    else this.balances.addNative(transfer.to, transfer.amountUnits);
    this.entries.push({ sequence, block, txId, from: transfer.from, to: transfer.to, currency: transfer.currency, amount: transfer.amountUnits });
    return txId;
  }

  position(): string {
    return String(this.entries.length);
  }

  /** Transfers to `treasury` after `position` (a sequence) mined at or below `finalBlock`, oldest first. */
  after(position: string, page: number, finalBlock: number, isTreasury: (address: string) => boolean) {
    const ready = this.entries.filter((t) => t.sequence > Number(position) && t.block <= finalBlock);
    const taken = ready.slice(0, page);
    return {
      transfers: taken.filter((t) => isTreasury(t.to)).map((t) => ({
        txId: t.txId,
        index: t.currency === 'USDC' ? 0 : this.nativeIndex,
        from: t.from,
        currency: t.currency,
        amountUnits: t.amount,
      })),
      position: String(taken.at(-1)?.sequence ?? Number(position)),
      more: ready.length > page,
    };
  }
}
