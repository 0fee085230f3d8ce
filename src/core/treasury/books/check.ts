// The check of a held chain (decision 199): the treasury's own transactions since the newest one the books hold as
// landed, asked of the chain with no lock held (ChainAdapter.treasuryTransactions), then, under the hold's row lock,
// matched against the books (src/domain/books-check.ts). Matched: the hold is lifted and the chain signs again by
// itself. Behind: the chain stays held, what the books lack is kept with the hold, and the operator alert
// `books_behind_chain` is raised until an operator accounts for each unknown transaction (operator.ts) and a later check
// matches. Chains are checked apart: one held chain never stops another.
import type { Logger } from 'pino';
import { BOOKS_CHECK_FINDINGS_MAX, BOOKS_CHECK_LANDED_TXS, BOOKS_CHECK_NONCES_MAX } from '../../../bounds.js';
import type { ChainAdapters, TreasuryActivity } from '../../../chains/port.js';
import type { Clock } from '../../../clock.js';
import type { Config } from '../../../config.js';
import { withTransaction, type Pool } from '../../../db/pool.js';
import { readKnownNonces, readKnownTxIds, listLandedTxIds, markHoldLifted, listOpenHolds, markHoldChecked, type HoldRow, type StoredFindings } from '../../../db/queries/books.js';
import { behindMessage, matchTreasury, type BooksVerdict } from '../../../domain/books-check.js';
import { raiseAlert, resolveAlert } from '../../operators/alerts.js';
import { observeHistory } from './history.js';

export interface BooksDeps {
  pool: Pool;
  clock: Clock;
  log: Logger;
  adapters: ChainAdapters;
  config: Pick<Config, 'chainNames' | 'operatorWebhookUrl'>;
}

export interface CheckOutcome {
  chain: string;
  verdict: BooksVerdict['kind'] | 'error';
}

/** One pass: the history observed, then every open hold of this process's chains checked, each on its own. */
export async function checkBooks(deps: BooksDeps): Promise<CheckOutcome[]> {
  await observeHistory(deps);
  const holds = await listOpenHolds(deps.pool, Object.keys(deps.adapters));
  return Promise.all(
    holds.map(async (hold): Promise<CheckOutcome> => {
      try {
        return { chain: hold.chain, verdict: await checkHold(deps, hold) };
      } catch (error) {
        deps.log.warn({ err: error, chain: hold.chain }, 'books check failed; the chain stays held and is checked again');
        return { chain: hold.chain, verdict: 'error' };
      }
    }),
  );
}

async function checkHold(deps: BooksDeps, hold: HoldRow): Promise<BooksVerdict['kind'] | 'error'> {
  const adapter = deps.adapters[hold.chain]!;
  // 1. The chain, asked with no lock held.
  const landed = await listLandedTxIds(deps.pool, hold.chain, BOOKS_CHECK_LANDED_TXS);
  const activity = await adapter.treasuryTransactions({ landed, mark: hold.mark });
  // 2. Under the hold's lock, against the books as they are now (an operator may have attached meanwhile).
  return withTransaction(deps.pool, async (tx) => {
    const now = deps.clock.now();
    const current = (await listOpenHolds(tx, [hold.chain], { forUpdate: true }))[0];
    if (current?.id !== hold.id) return 'wait';
    const known = await readKnownTxIds(tx, hold.chain, activity.transactions.map((t) => t.txId));
    const nonces = activity.nonces === null ? { highest: null, foreign: new Set<number>() } : await readKnownNonces(tx, hold.chain);
    const verdict = matchTreasury(
      { ...activity, known, highestKnownNonce: nonces.highest, foreignNonces: nonces.foreign },
      BOOKS_CHECK_NONCES_MAX,
    );
    log(deps.log, hold, verdict);
    if (verdict.kind === 'matched') {
      await markHoldLifted(tx, hold.id, 'check', now);
      await resolveAlert(tx, deps, 'books_behind_chain', hold.chain, now);
    } else if (verdict.kind === 'wait') {
      await markHoldChecked(tx, hold.id, { state: 'checking', mark: activity.mark, findings: null, at: now });
    } else {
      await markHoldChecked(tx, hold.id, { state: 'behind', mark: activity.mark, findings: findingsOf(verdict, activity), at: now });
      await raiseAlert(tx, deps, { kind: 'books_behind_chain', chain: hold.chain, message: behindMessage(hold.chain, verdict) }, now);
    }
    return verdict.kind;
  });
}

function findingsOf(verdict: Extract<BooksVerdict, { kind: 'behind' }>, activity: TreasuryActivity): StoredFindings {
  const signed = new Map(activity.transactions.map((t) => [t.txId, t.signed]));
  return {
    unknown: verdict.unknown.slice(0, BOOKS_CHECK_FINDINGS_MAX).map((t) => ({
      tx_id: t.txId,
      nonce: t.nonce,
      failed: t.failed,
      memo: t.memo,
      transfers: t.transfers.map((p) => ({ to: p.to, amount_micros: p.amountMicros.toString() })),
      signed: signed.get(t.txId) ?? null,
    })),
    unknown_nonces: verdict.unknownNonces,
    incomplete: verdict.incomplete || verdict.unknown.length > BOOKS_CHECK_FINDINGS_MAX,
  };
}

function log(logger: Logger, hold: HoldRow, verdict: BooksVerdict): void {
  const fields = { chain: hold.chain, hold_id: hold.id };
  if (verdict.kind === 'matched') logger.info(fields, 'books match the treasury on chain: signing resumes');
  else if (verdict.kind === 'behind' && hold.state !== 'behind') {
    logger.error(
      { ...fields, unknown_transactions: verdict.unknown.map((t) => t.txId), unknown_nonces: verdict.unknownNonces, incomplete: verdict.incomplete },
      'the treasury moved on chain without the books (a database failover lost commits): signing stays held until an operator accounts for it',
    );
  }
}
