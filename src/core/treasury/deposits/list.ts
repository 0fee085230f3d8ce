// Operator views of inbound transfers: GET /admin/deposits and the overview's recent deposits.
import { listInbound, type InboundTransferRow } from '../../../db/queries/deposits.js';
import type { Chain } from '../../../domain/chain.js';
import { INBOUND_MATCH_STATUSES, NEEDS_OPERATOR, type InboundMatchStatus } from '../../../domain/inbound-match.js';
import type { AppContext } from '../../context.js';

/** `unmatched` asks for every USDC deposit waiting for an operator: unmatched and ambiguous (decision 126). */
export const DEPOSIT_STATUS_FILTERS = ['all', ...INBOUND_MATCH_STATUSES] as const;
export type DepositStatusFilter = (typeof DEPOSIT_STATUS_FILTERS)[number];

export interface DepositPage {
  data: InboundTransferRow[];
  /** The id to pass as `before` for the next page; null on the last. */
  next: number | null;
}

export async function depositsPage(
  ctx: Pick<AppContext, 'pool'>,
  filter: { status: DepositStatusFilter; chain: Chain | null; before: number | null; limit: number },
): Promise<DepositPage> {
  const statuses: readonly InboundMatchStatus[] | null =
    filter.status === 'all' ? null : filter.status === 'unmatched' ? NEEDS_OPERATOR : [filter.status];
  const rows = await listInbound(ctx.pool, { statuses, chain: filter.chain, before: filter.before, limit: filter.limit + 1 });
  const data = rows.slice(0, filter.limit);
  return { data, next: rows.length > filter.limit ? data.at(-1)!.id : null };
}

export async function recentDeposits(ctx: Pick<AppContext, 'pool'>, limit: number): Promise<InboundTransferRow[]> {
  return listInbound(ctx.pool, { statuses: null, chain: null, before: null, limit });
}
