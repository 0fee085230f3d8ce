// The read server as operators see it (the console's health page, GET /admin/read-replica): whether console lists,
// exports and metrics gauges read off the primary (DATABASE_READ_URL, decision 195), and how far behind they are.
import { replicaState } from '../../../db/read-pool.js';
import type { AppContext } from '../../context.js';

export interface ReadReplicaStatus {
  configured: boolean;
  /** The read server is a standby (null: none configured). */
  standby: boolean | null;
  /** Seconds its data is behind the primary's (null: none configured). */
  lagSeconds: number | null;
}

export async function readReplicaStatus(ctx: Pick<AppContext, 'reads'>): Promise<ReadReplicaStatus> {
  if (!ctx.reads) return { configured: false, standby: null, lagSeconds: null };
  const state = await replicaState(ctx.reads);
  return { configured: true, standby: state.standby, lagSeconds: state.lagSeconds };
}
