// Continuous reconciliation (decision 119): every RECONCILE_INTERVAL_SECONDS the ledger is compared with each chain
// (reconcile.ts, decision 116), the verdicts are kept as history, and a `mismatch` raises the operator alert (a surplus
// on chain only once it has lasted RECONCILE_SURPLUS_GRACE_SECONDS), which resolves once the chain agrees again
// (`ok`, or short by no more than what has landed on chain and is not settled yet, decision 117). An `error` (chain
// unreachable) says nothing either way and leaves the alert as it is.
import type { Token } from '../../domain/token.js';
import { tryAdvisoryXactLock, withTransaction, type Queryable } from '../../db/pool.js';
import {
  readAnyReconciliationRunSince,
  insertReconciliationRuns,
  listReconciliationRuns,
  readMismatchSince,
  type ReconciliationRunRow,
} from '../../db/queries/reconciliations.js';
import type { Chain } from '../../domain/chain.js';
import { parseUsdc } from '../../money.js';
import { raiseAlert, resolveAlert } from '../operators/alerts.js';
import type { AppContext } from '../context.js';
import { reconcile, type ChainReconciliation } from './reconcile.js';

// Advisory lock keys in use: 7_340_211_001 (start-up), 7_340_212_00x (health), 7_340_213_001 (confirmation round).
const LOCK = 7_340_214_141; // 141: its decision's number before issue 26 (now 119), so a key another change picks is unlikely to collide
/** A run younger than this share of the interval means another worker process already ran this period. */
const SAME_PERIOD_SHARE = 0.9;

export type ReconcileDeps = Pick<AppContext, 'pool' | 'adapters' | 'clock' | 'log'> & {
  /** Each chain's NAME_TOKENS (tokensOfConfig); absent: USDC only. */
  tokensOf?: (chain: string) => readonly Token[];
  config: Pick<AppContext['config'], 'operatorWebhookUrl' | 'reconcileIntervalSeconds' | 'reconcileSurplusGraceSeconds'>;
};

/**
 * One run. Returns the verdicts, or null when another worker process recorded this period's run (every worker runs
 * the loop; one run per period is kept).
 */
export async function runReconciliation(deps: ReconcileDeps): Promise<ChainReconciliation[] | null> {
  const periodStart = () => new Date(deps.clock.now().getTime() - deps.config.reconcileIntervalSeconds * 1000 * SAME_PERIOD_SHARE);
  // Another worker process already ran this period: do not ask the chains for nothing (checked again under the lock).
  if (await readAnyReconciliationRunSince(deps.pool, periodStart())) return null;
  // The chains are asked before the transaction: no lock is held while a node answers.
  const results = await reconcile(deps.pool, deps.adapters, deps.tokensOf);
  return withTransaction(deps.pool, async (tx) => {
    if (!(await tryAdvisoryXactLock(tx, LOCK))) return null;
    const now = deps.clock.now();
    if (await readAnyReconciliationRunSince(tx, periodStart())) return null;
    await insertReconciliationRuns(
      tx,
      results.map((r) => ({
        chain: r.chain,
        token: r.token ?? 'usdc',
        status: r.status,
        address: r.address,
        ledger_usdc: r.ledger_usdc,
        in_flight_usdc: r.in_flight_usdc,
        on_chain_usdc: r.on_chain_usdc,
        difference_usdc: r.difference_usdc,
        error: r.error ?? null,
        created_at: now,
      })),
    );
    for (const r of results) {
      if (r.status === 'mismatch') {
        // Money missing from the wallet alerts at once. More on chain than in the books is usually a deposit still
        // confirming (decision 118): it alerts only once it has lasted RECONCILE_SURPLUS_GRACE_SECONDS.
        const surplus = r.error === undefined && r.on_chain_usdc !== null && parseUsdc(r.on_chain_usdc) > parseUsdc(r.ledger_usdc);
        if (surplus) {
          const since = (await readMismatchSince(tx, r.chain)) ?? now;
          if (now.getTime() - since.getTime() < deps.config.reconcileSurplusGraceSeconds * 1000) continue;
        }
        const message =
          r.error ??
          `${r.chain} treasury ledger books ${r.ledger_usdc} ${r.token === undefined ? 'USDC' : r.token.toUpperCase()} (${r.in_flight_usdc} in flight${r.landed_usdc === null ? '' : `, ${r.landed_usdc} landed`}) but the chain holds ${r.on_chain_usdc} (difference ${r.difference_usdc})`;
        await raiseAlert(tx, deps, { kind: 'reconciliation_mismatch', chain: r.chain, message }, now);
      } else if (r.status === 'ok' || r.status === 'in_flight') {
        await resolveAlert(tx, deps, 'reconciliation_mismatch', r.chain, now);
      }
    }
    return results;
  });
}

/**
 * One page of the runs' history, newest first (GET /admin/reconciliations), and the next page's cursor: the last run's
 * id of a full page, null after a short one.
 */
export async function reconciliationRunPage(
  db: Queryable,
  filter: { chain?: Chain; limit: number; before?: number },
): Promise<{ runs: ReconciliationRunRow[]; nextCursor: string | null }> {
  const runs = await listReconciliationRuns(db, filter);
  return { runs, nextCursor: runs.length === filter.limit ? String(runs[runs.length - 1]!.id) : null };
}
