// A transfer from outside on a simulated chain (`stableroute simulate transfer`): what a customer, an exchange or a
// payout's recipient sends. The simulator keeps only the treasury's balances, so a transfer between two other
// addresses is recorded and changes nothing we can see; one to the treasury raises its on-chain balances and is what
// the deposit scanner reads (listInboundTransfers). Final once written: the simulated network has no reorgs.
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { withTransaction, type Pool } from '../../db/pool.js';
import { familyOf, type Chain } from '../../domain/chain.js';
import { sameAddress } from '../../domain/addresses.js';
import type { TokenCurrency } from '../../domain/token.js';

/** The simulator refuses this transfer; nothing was recorded. */
export class SimulatedTransferRefused extends Error {
  override readonly name = 'SimulatedTransferRefused';
}

export interface ExternalTransfer {
  chain: Chain;
  from: string;
  to: string;
  currency: TokenCurrency | 'native';
  /** Token micro-units, wei or lamports; positive. */
  amountUnits: bigint;
  at: Date;
}

/** Records the transfers in one transaction (one "block"); their tx ids, in order. */
export async function recordExternalTransfers(db: Pool, seed: string, transfers: readonly ExternalTransfer[]): Promise<string[]> {
  return withTransaction(db, async (tx) => {
    const ids: string[] = [];
    for (const transfer of transfers) {
      if (transfer.amountUnits <= 0n) throw new RangeError('a transfer moves a positive amount');
      // Numbered under the wallet row's lock: numbers commit in order, so the scanner's position never passes one
      // that commits later.
      const { rows } = await tx.query<{ sequence: string; treasury: string }>(
        `UPDATE sim_wallets SET last_external_sequence = last_external_sequence + 1 WHERE chain = $1
         RETURNING last_external_sequence::text AS sequence, address AS treasury`,
        [transfer.chain],
      );
      if (!rows[0]) throw new Error(`no simulated ${transfer.chain} network in this database: start the service once first`);
      const { sequence, treasury } = rows[0];
      // The treasury's money leaves only through payouts (and the ledger): the simulator takes no other send from it.
      if (sameAddress(transfer.chain, transfer.from, treasury)) {
        throw new SimulatedTransferRefused(`the simulated ${transfer.chain} treasury sends only payouts; --from must be another address`);
      }
      const bytes = createHash('sha256').update([seed, 'external', transfer.chain, sequence].join('\u0000')).digest();
      const txId =
        familyOf(transfer.chain) === 'evm'
          ? `0x${bytes.toString('hex')}`
          : getBase58Decoder().decode(Buffer.concat([bytes, createHash('sha256').update(bytes).digest()]));
      await tx.query(
        `INSERT INTO sim_external_transfers (chain, sequence, tx_id, from_address, to_address, currency, amount, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [transfer.chain, sequence, txId, transfer.from, transfer.to, transfer.currency, transfer.amountUnits.toString(), transfer.at],
      );
      ids.push(txId);
    }
    return ids;
  });
}
