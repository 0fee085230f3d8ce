// `stableroute treasury withdraw`: the operator sends treasury USDC out through the payouts' lifecycle (decision 121).
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { withdrawalView } from '../api/views/withdrawals.js';
import { createWithdrawal } from '../core/treasury/withdrawals.js';
import type { CliHelpers } from './policies.js';
import { refusable, usage } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';

const USAGE = 'usage: stableroute treasury withdraw --chain ethereum|solana --to ADDRESS --usdc N [--token usdc|usdt|pyusd] [--idempotency-key KEY] [--json]\n';

export async function treasuryCommand(args: string[], config: Config, helpers: Pick<CliHelpers, 'withContext' | 'out'>): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      to: { type: 'string' },
      usdc: { type: 'string' },
      token: { type: 'string' },
      'idempotency-key': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] !== 'withdraw' || positionals.length !== 1 || !values.chain || !values.to || !values.usdc) {
    return usage(USAGE);
  }
  return helpers.withContext(config, async (ctx) => {
    const audit = cliAudit('withdrawal.create', [], { chain: values.chain, to: values.to, amount_usdc: values.usdc, token: values.token, idempotency_key: values['idempotency-key'] });
    return refusable(async () => {
      const result = await recordingRefusals(ctx, audit, () => createWithdrawal(ctx, {
        chain: values.chain!,
        to: values.to!,
        amountUsdc: values.usdc!,
        token: values.token,
        idempotencyKey: values['idempotency-key'],
        audit,
      }));
      const view = withdrawalView(result, config.chains);
      if (values.json) helpers.out(JSON.stringify({ ...view, replayed: result.replayed }));
      else {
        helpers.out(view.id);
        process.stderr.write(
          `${result.replayed ? 'already accepted' : 'accepted'}: ${view.amount_usdc} ${view.token.toUpperCase()} on ${view.chain} to ${view.to}, reserved; ` +
            'the workers sign and send it (GET /admin/withdrawals/' + view.id + ')\n',
        );
      }
      return 0;
    });
  });
}
