// Chain health over time for the console's charts: the collector's (and operators') snapshots, bounded per chain.
import { listSnapshotHistory } from '../../../db/queries/snapshot-history.js';
import type { SnapshotRow } from '../../../db/queries/snapshots.js';
import type { Chain } from '../../../domain/chain.js';
import type { AppContext } from '../../context.js';
import { ADMIN_HEALTH_HISTORY_POINTS_DEFAULT } from '../../../bounds.js';

export async function chainHealthHistory(
  ctx: Pick<AppContext, 'pool' | 'config'>,
  options: { chain?: Chain; since?: Date; points?: number },
): Promise<SnapshotRow[]> {
  const chains = options.chain ? [options.chain] : ctx.config.chainNames;
  return listSnapshotHistory(ctx.pool, chains, options.since ?? new Date(0), options.points ?? ADMIN_HEALTH_HISTORY_POINTS_DEFAULT);
}
