// Reconciliation: the ledger's view of each treasury wallet against the chain's. The wallet should hold available +
// reserved + in-flight USDC, less what has landed on chain and is not settled in the books yet: a shortfall is
// explained by transfers the chain reports included or final, never by transfers only signed or pending (decision
// 117). The chain is asked about the transfers in flight only when a shortfall needs explaining, in batched calls, and
// never while a transaction is open.
import { currencyOf, DEFAULT_TOKEN, type Token } from '../../domain/token.js';
import { sameAddress } from '../../domain/addresses.js';
import { type Chain } from '../../domain/chain.js';
import { adapterOf, type ChainAdapter, type ChainAdapters } from '../../chains/port.js';
import { withReadSnapshot, type Pool } from '../../db/pool.js';
import { listInFlightTransfers, type InFlightTransfer } from '../../db/queries/attempts.js';
import { OPEN_STATUSES } from '../../domain/payment-intent.js';
import { landedUnbookedMicros, needsLandedTransfers, reconciliationStatus, type CheckedTransfer } from '../../domain/reconciliation.js';
import { holdingsOf, treasuryBalances, type TreasuryBalance } from '../../ledger/store.js';
import { formatUsdc } from '../../money.js';
import { RECONCILE_STATUS_PAGE_TRANSFERS } from '../../bounds.js';

export interface ChainReconciliation {
  chain: Chain;
  /** The token compared, when not USDC (whose rows keep their shape); its amounts are in the `_usdc` fields. */
  token?: Token;
  /** The live treasury: the wallet the adapter pays from, whose on-chain balance is compared. */
  address: string;
  adapter: 'simulated' | 'rpc';
  ledger_usdc: string;
  in_flight_usdc: string;
  /**
   * Of what is in flight, what the chain reports landed (included or final) and the books have not settled: what may
   * explain a shortfall. Null when nothing needed explaining, so the chain was not asked.
   */
  landed_usdc: string | null;
  on_chain_usdc: string | null;
  difference_usdc: string | null;
  /**
   * ok: equal. in_flight: short by no more than what landed and is not settled yet. mismatch: anything else. error: the
   * chain could not be asked (for its balance, or about the transfers a shortfall needs).
   */
  status: 'ok' | 'in_flight' | 'mismatch' | 'error';
  error?: string;
}

type Wallet = { balance: bigint } | { error: string };

/**
 * Every (chain, token) the books hold (issue 40), each token on its own: USDC's rows as before, another token's naming
 * it. `tokensOf`: a chain's NAME_TOKENS.
 */
export async function reconcile(pool: Pool, adapters: ChainAdapters, tokensOf: (chain: Chain) => readonly Token[] = () => [DEFAULT_TOKEN]): Promise<ChainReconciliation[]> {
  const tokens = [...new Set(Object.keys(adapters).flatMap((chain) => tokensOf(chain)))];
  const results: ChainReconciliation[] = [];
  for (const token of tokens) {
    const holding = Object.fromEntries(Object.entries(adapters).filter(([chain]) => tokensOf(chain).includes(token)));
    const rows = await reconcileToken(pool, holding, token);
    results.push(...(token === DEFAULT_TOKEN ? rows : rows.map((row) => ({ ...row, token }))));
  }
  return results;
}

async function reconcileToken(pool: Pool, adapters: ChainAdapters, token: Token): Promise<ChainReconciliation[]> {
  // 1. The wallets, before the books: a transfer settled in between is then gone from both. Read the other way round,
  // it would be gone from the wallet, still in the books' holdings, and no longer in flight to explain it.
  const wallets = new Map<Chain, Wallet>(
    await Promise.all(Object.entries(adapters).map(async ([chain, adapter]): Promise<[Chain, Wallet]> => [chain, await walletOf(adapter, token)])),
  );
  // 2. The books, and the transfers in flight of each chain whose shortfall they may explain, on one snapshot: the
  // holdings and the list of what is in flight agree with each other.
  const { balances, transfers } = await withReadSnapshot(pool, async (tx) => {
    const rows = await treasuryBalances(tx, currencyOf(token));
    const explain = rows.filter((row) => {
      const wallet = wallets.get(row.chain);
      if (!wallet || 'error' in wallet || !sameAddress(row.chain, row.address, adapterOf(adapters, row.chain).treasuryAddress())) return false;
      return needsLandedTransfers(wallet.balance - holdingsOf(row), row.inFlightMicros);
    });
    return { balances: rows, transfers: await listInFlightTransfers(tx, explain.map((row) => row.chain), OPEN_STATUSES, token) };
  });
  // 3. Per chain, what the wallet says against the books; the chain asked about its transfers in flight where needed.
  const results: ChainReconciliation[] = [];
  for (const [chain, adapter] of Object.entries(adapters)) {
    const row = balances.find((r) => r.chain === chain);
    if (!row) continue;
    results.push(await reconcileChain(adapter, row, wallets.get(chain)!, transfers.filter((t) => t.chain === chain)));
  }
  return results;
}

async function walletOf(adapter: ChainAdapter, token: Token): Promise<Wallet> {
  try {
    return { balance: await adapter.treasuryTokenBalance(token) };
  } catch (error) {
    return { error: String(error) };
  }
}

async function reconcileChain(
  adapter: ChainAdapter,
  row: TreasuryBalance,
  wallet: Wallet,
  transfers: readonly InFlightTransfer[],
): Promise<ChainReconciliation> {
  const chain = row.chain;
  const ledger = holdingsOf(row);
  const address = adapter.treasuryAddress();
  const base = {
    chain,
    address,
    adapter: adapter.kind,
    ledger_usdc: formatUsdc(ledger),
    in_flight_usdc: formatUsdc(row.inFlightMicros),
    landed_usdc: null,
  };
  if (!sameAddress(chain, row.address, address)) {
    // Balances of two different wallets say nothing about each other (start-up refuses this; see ensureTreasuries).
    const error = `the ledger books treasury ${row.address}, not ${address}`;
    return { ...base, on_chain_usdc: null, difference_usdc: null, status: 'mismatch', error };
  }
  if ('error' in wallet) return { ...base, on_chain_usdc: null, difference_usdc: null, status: 'error', error: wallet.error };
  const difference = wallet.balance - ledger;
  const compared = { ...base, on_chain_usdc: formatUsdc(wallet.balance), difference_usdc: formatUsdc(difference) };
  if (!needsLandedTransfers(difference, row.inFlightMicros)) return { ...compared, status: reconciliationStatus(difference, 0n) };
  let landed: bigint;
  try {
    landed = landedUnbookedMicros(chain, await checked(adapter, transfers));
  } catch (error) {
    return { ...compared, status: 'error', error: `the chain could not be asked about the transfers in flight: ${String(error)}` };
  }
  return { ...compared, landed_usdc: formatUsdc(landed), status: reconciliationStatus(difference, landed) };
}

/** What the chain says about each transfer, a page per call. Throws when the node cannot be asked. */
async function checked(adapter: ChainAdapter, transfers: readonly InFlightTransfer[]): Promise<CheckedTransfer[]> {
  const result: CheckedTransfer[] = [];
  for (let i = 0; i < transfers.length; i += RECONCILE_STATUS_PAGE_TRANSFERS) {
    const page = transfers.slice(i, i + RECONCILE_STATUS_PAGE_TRANSFERS);
    const statuses = await adapter.getStatuses(page.map((t) => t.signed));
    page.forEach((t, n) => result.push({ paymentIntentId: t.payment_intent_id, amountMicros: t.amount_micros, status: statuses[n]! }));
  }
  return result;
}
