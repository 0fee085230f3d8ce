// Gas checks shared by the health collector: the booked native balance against the low-water mark, with the operator
// alert raised or resolved in the caller's transaction (decisions 28, 120).
import type { ChainAdapter } from '../../chains/port.js';
import type { Config } from '../../config.js';
import type { Queryable } from '../../db/pool.js';
import { lowGasReason } from '../../domain/gas.js';
import { treasuryNativeBalances } from '../../ledger/native-balances.js';
import { raiseAlert, resolveAlert, type AlertDeps } from '../operators/alerts.js';

export type GasDeps = AlertDeps & { config: Pick<Config, 'chains' | 'operatorWebhookUrl'> };

/** Returns the low-gas reason (the chain is then degraded), or null. Raises or resolves the `low_gas` alert. */
export async function checkGas(tx: Queryable, deps: GasDeps, adapter: ChainAdapter, at: Date): Promise<string | null> {
  const booked = (await treasuryNativeBalances(tx)).find((b) => b.chain === adapter.chain);
  if (!booked) return null; // no treasury yet: nothing booked to judge
  const reason = lowGasReason({
    chain: adapter.chain,
    currency: adapter.nativeCurrency,
    decimals: adapter.nativeDecimals,
    bookedUnits: booked.units,
    lowWaterUnits: deps.config.chains[adapter.chain]!.gasLowWater,
  });
  if (reason !== null) await raiseAlert(tx, deps, { kind: 'low_gas', chain: adapter.chain, message: reason }, at);
  else await resolveAlert(tx, deps, 'low_gas', adapter.chain, at);
  return reason;
}
