// Response shapes of the admin views: chain-health snapshots, treasury balances, the overview, route distribution.
import { depositView } from './deposits.js';
import { healthRecord } from '../../core/payments/quotes.js';
import type { SnapshotRow } from '../../db/queries/snapshots.js';
import type { WebhookEventRow } from '../../db/queries/webhook-events.js';
import type { Overview } from '../../core/operators/admin.js';
import { formatUsdc, usdcToNumber } from '../../money.js';
import type { Chain } from '../../domain/chain.js';
import { readView } from './payment-intents.js';

/** A snapshot is shown the way quotes record what they saw. */
export function snapshotView(s: SnapshotRow) {
  return healthRecord(s);
}

export function overviewView(o: Overview) {
  return {
    payments: {
      total: o.counts.total,
      settled: o.counts.settled,
      failed: o.counts.failed,
      pending: o.counts.pending,
      total_volume_usd: usdcToNumber(o.counts.settledVolumeMicros),
    },
    chain_health: o.snapshots.map(snapshotView),
    treasury_balances: o.balances.map((b) => ({
      chain: b.chain,
      address: b.address,
      available_balance: usdcToNumber(b.availableMicros),
      reserved_balance: usdcToNumber(b.reservedMicros),
    })),
    recent_payments: o.recent.map(({ intent, attempts }) => readView(intent, attempts, null)),
    recent_deposits: o.deposits.map(depositView),
  };
}

/** Count and volume as numeric strings, as clients of the original system receive them from PostgreSQL. */
export function routeDistributionView(rows: { chain: Chain; count: string; volumeMicros: bigint }[]) {
  return rows.map((r) => ({ selected_chain: r.chain, count: r.count, volume: formatUsdc(r.volumeMicros) }));
}

export function webhookEventView(e: WebhookEventRow) {
  return {
    ...e,
    next_attempt_at: e.next_attempt_at.toISOString(),
    delivered_at: e.delivered_at?.toISOString() ?? null,
    created_at: e.created_at.toISOString(),
  };
}
