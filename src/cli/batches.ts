// `stableroute batches approve|reject ID`: a payout batch held whole (decision 178) decided from the command line, by
// the use case POST /admin/payout_batches/:id/approve|reject runs. Exit codes: 0 ok, 1 refused, 2 usage.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { approvePayoutBatch, rejectPayoutBatch } from '../core/operators/transitions/approve-batch.js';
import { cliAudit, recordingRefusals } from './actor.js';
import { refusable, usage } from './exits.js';
import type { CliHelpers } from './policies.js';

export const BATCHES_USAGE = `usage: stableroute batches approve|reject PAYOUT_BATCH_ID [--reason TEXT] [--json]
`;

export async function batchesCommand(args: string[], config: Config, h: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { reason: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [action, batchId, ...rest] = positionals;
  if ((action !== 'approve' && action !== 'reject') || !batchId || rest.length > 0) return usage(BATCHES_USAGE);
  // Approval queues the payments' executions, so it needs the queue: a full context.
  return h.withContext(config, (ctx) =>
    refusable(async () => {
      const audit = cliAudit(`payout_batch.${action}`, [batchId], { reason: values.reason });
      const input = { reason: values.reason ?? null, audit };
      const decide = () => (action === 'approve' ? approvePayoutBatch(ctx, batchId, input) : rejectPayoutBatch(ctx, batchId, input));
      const result = await recordingRefusals(ctx, audit, decide);
      const progress = result.approval === 'pending' ? `, ${result.approvals} of ${result.approvals_required} approvals` : '';
      h.out(values.json ? JSON.stringify(result) : `${result.payout_batch_id}: ${result.approval}${progress} (${result.payments} payments)`);
      return 0;
    }),
  );
}
