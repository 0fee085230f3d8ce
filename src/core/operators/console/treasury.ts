// Each chain's treasury as the ledger books it (USDC available / reserved / in flight, native currency for fees)
// and the confirmation backlog in front of it. Ledger only, no chain call: the console shows it on every refresh.
// The on-chain comparison is reconcile.ts (GET /admin/reconciliation), asked separately because it calls the chains.
import { adapterOf } from '../../../chains/port.js';
import { countConfirmationBacklog, type ChainBacklog } from '../../../db/queries/backlog.js';
import { type Chain, type NativeCurrency } from '../../../domain/chain.js';
import { treasuryNativeBalances } from '../../../ledger/native-balances.js';
import { treasuryBalances } from '../../../ledger/store.js';
import { WATCHED } from '../../../domain/confirmation.js';
import type { Queryable } from '../../../db/pool.js';
import type { AppContext } from '../../context.js';

export interface TreasuryState {
  chain: Chain;
  address: string;
  adapter: 'simulated' | 'rpc';
  availableMicros: bigint;
  /** Promised to payments not signed yet. */
  reservedMicros: bigint;
  /** In signed or broadcast transfers, not final. */
  inFlightMicros: bigint;
  nativeCurrency: NativeCurrency;
  nativeUnits: bigint;
  nativeDecimals: number;
  /** GAS_LOW_WATER of the chain: below it the chain is degraded (decision 28). */
  gasLowWaterUnits: bigint;
  backlog: ChainBacklog;
}

export async function treasuryStates(ctx: { pool: Queryable } & Pick<AppContext, 'adapters'> & { config: Pick<AppContext['config'], 'chains'> }): Promise<TreasuryState[]> {
  const [balances, natives, backlogs] = await Promise.all([
    treasuryBalances(ctx.pool),
    treasuryNativeBalances(ctx.pool),
    countConfirmationBacklog(ctx.pool, WATCHED),
  ]);
  return Object.keys(ctx.adapters).flatMap((chain) => {
    const balance = balances.find((b) => b.chain === chain);
    if (!balance) return [];
    const adapter = adapterOf(ctx.adapters, chain);
    return [
      {
        chain,
        address: balance.address,
        adapter: adapter.kind,
        availableMicros: balance.availableMicros,
        reservedMicros: balance.reservedMicros - balance.inFlightMicros,
        inFlightMicros: balance.inFlightMicros,
        nativeCurrency: adapter.nativeCurrency,
        nativeUnits: natives.find((n) => n.chain === chain)?.units ?? 0n,
        nativeDecimals: adapter.nativeDecimals,
        gasLowWaterUnits: ctx.config.chains[chain]!.gasLowWater,
        backlog: backlogs.find((b) => b.chain === chain) ?? { chain, attempts: 0, oldestBroadcastAt: null },
      },
    ];
  });
}
