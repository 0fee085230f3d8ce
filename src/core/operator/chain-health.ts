// Chain health over time for the console's charts: the collector's (and operators') snapshots, bounded per chain.
import { snapshotHistory } from '../../db/queries/snapshot-history.js';
import type { SnapshotRow } from '../../db/queries/snapshots.js';
import { CHAINS, type Chain } from '../../domain/chain.js';
import type { AppContext } from '../context.js';

/** A chart shows at most this many points per chain: about an hour at the default 15 s collection period. */
export const DEFAULT_HISTORY_POINTS = 240;
export const MAX_HISTORY_POINTS = 2000;

export async function chainHealthHistory(
  ctx: Pick<AppContext, 'pool'>,
  options: { chain?: Chain; since?: Date; points?: number },
): Promise<SnapshotRow[]> {
  const chains = options.chain ? [options.chain] : CHAINS;
  return snapshotHistory(ctx.pool, chains, options.since ?? new Date(0), options.points ?? DEFAULT_HISTORY_POINTS);
}
