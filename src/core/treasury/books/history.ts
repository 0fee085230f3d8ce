// Which database history the books are written under (decision 198). A process that finds the database on another
// history than the books last recorded (a promoted standby writes on a new timeline, a restored backup or another
// cluster has another system identifier) records the new one and, in the same transaction, holds every chain's
// signing until a check has matched the chain's treasury transactions against the books (check.ts). Signing reads both
// in its own transaction (sign-attempts.ts: clearToSign), so a signature can never slip out in between: until this
// runs, the history itself differs and holds every chain.
import type { Logger } from 'pino';
import type { Clock } from '../../../clock.js';
import type { Config } from '../../../config.js';
import { withTransaction, type Pool } from '../../../db/pool.js';
import { listChainsToHold, lockHistory, insertHolds, upsertHistory } from '../../../db/queries/books.js';
import { historyChanged, historyText } from '../../../domain/books-check.js';
import type { Chain } from '../../../domain/chain.js';
import { newId } from '../../../ids.js';

export interface HistoryDeps {
  pool: Pool;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'chainNames'>;
}

/** Records the database's history; when it changed, the chains newly held (every chain the books or CHAINS name). */
export async function observeHistory(deps: HistoryDeps): Promise<{ changed: boolean; held: Chain[] }> {
  const result = await withTransaction(deps.pool, async (tx) => {
    const at = deps.clock.now();
    const { stored, current } = await lockHistory(tx);
    if (!historyChanged(stored, current)) return { changed: false, held: [], from: '', to: '' };
    const from = historyText(stored);
    const to = historyText(current);
    const chains = await listChainsToHold(tx, deps.config.chainNames);
    const held = await insertHolds(tx, chains.map((chain) => ({ id: newId('hld'), chain })), { from, to }, at);
    await upsertHistory(tx, current, at);
    return { changed: true, held, from, to };
  });
  if (result.changed) {
    deps.log.warn(
      { history_from: result.from, history_to: result.to, chains: result.held },
      'the database is on another history than the books were written under (a failover or a restore): signing is held on every chain until its treasury transactions are matched against the books',
    );
  }
  return { changed: result.changed, held: result.held };
}
