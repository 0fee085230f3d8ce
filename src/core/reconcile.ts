// Reconciliation: the ledger's view of each treasury wallet against the chain's. The wallet should hold available +
// reserved + in-flight USDC; a transfer that landed but is not final in our books shows as an explained difference.
import { sameAddress } from '../domain/addresses.js';
import { CHAINS, type Chain } from '../domain/chain.js';
import type { ChainAdapters } from '../chains/port.js';
import type { Queryable } from '../db/pool.js';
import { holdingsOf, treasuryBalances } from '../ledger/store.js';
import { formatUsdc } from '../money.js';

export interface ChainReconciliation {
  chain: Chain;
  /** The live treasury: the wallet the adapter pays from, whose on-chain balance is compared. */
  address: string;
  adapter: 'simulated' | 'rpc';
  ledger_usdc: string;
  in_flight_usdc: string;
  on_chain_usdc: string | null;
  difference_usdc: string | null;
  /** ok: equal. in_flight: short by no more than what is in flight. mismatch: anything else. error: chain unreachable. */
  status: 'ok' | 'in_flight' | 'mismatch' | 'error';
  error?: string;
}

export async function reconcile(db: Queryable, adapters: ChainAdapters): Promise<ChainReconciliation[]> {
  const rows = await treasuryBalances(db);
  const results: ChainReconciliation[] = [];
  for (const chain of CHAINS) {
    const row = rows.find((r) => r.chain === chain);
    if (!row) continue;
    const ledger = holdingsOf(row);
    const inFlight = row.inFlightMicros;
    const address = adapters[chain].treasuryAddress();
    const base = {
      chain,
      address,
      adapter: adapters[chain].kind,
      ledger_usdc: formatUsdc(ledger),
      in_flight_usdc: formatUsdc(inFlight),
    };
    if (!sameAddress(chain, row.address, address)) {
      // Balances of two different wallets say nothing about each other (start-up refuses this; see ensureTreasuries).
      const error = `the ledger books treasury ${row.address}, not ${address}`;
      results.push({ ...base, on_chain_usdc: null, difference_usdc: null, status: 'mismatch', error });
      continue;
    }
    try {
      const onChain = await adapters[chain].treasuryUsdcBalance();
      const difference = onChain - ledger;
      const status = difference === 0n ? 'ok' : difference < 0n && -difference <= inFlight ? 'in_flight' : 'mismatch';
      results.push({ ...base, on_chain_usdc: formatUsdc(onChain), difference_usdc: formatUsdc(difference), status });
    } catch (error) {
      results.push({ ...base, on_chain_usdc: null, difference_usdc: null, status: 'error', error: String(error) });
    }
  }
  return results;
}
