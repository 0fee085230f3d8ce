// `stableroute books list|attach|foreign`: the books against the chains after a database failover or restore
// (decisions 198-200), as GET /admin/books and POST /admin/books/:chain/attach|foreign. Exit codes: 0 ok, 1 refused,
// 2 usage.
import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import { attachUnknownTransaction, declareForeign, listHolds } from '../core/treasury/books/operator.js';
import { isChainIn } from '../domain/chain.js';
import { cliAudit, recordingRefusals } from './actor.js';
import { refusable, usage } from './exits.js';
import type { CliHelpers } from './policies.js';

const USAGE = `usage: stableroute books list [--json]
       stableroute books attach --chain C --tx TX_ID [--payment PAYMENT_INTENT_ID ...] [--json]
       stableroute books foreign --chain C (--tx TX_ID | --nonce N) --reason TEXT [--json]
`;

export async function booksCommand(args: string[], config: Config, helpers: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      tx: { type: 'string' },
      nonce: { type: 'string' },
      payment: { type: 'string', multiple: true },
      reason: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const verb = positionals[0];
  if (positionals.length !== 1 || (verb !== 'list' && verb !== 'attach' && verb !== 'foreign')) return usage(USAGE);
  if (verb === 'list') {
    return helpers.withDatabase(config, async (pool) => {
      const holds = await listHolds(pool);
      if (values.json) helpers.out(JSON.stringify({ data: holds }));
      else if (holds.length === 0) helpers.out('no chain has been held: the database is on the history the books were written under');
      else {
        for (const h of holds) {
          helpers.out(`${h.chain}\t${h.state}\topened ${h.opened_at}\t${h.history_from} -> ${h.history_to}${h.lifted_at ? `\tlifted ${h.lifted_at} by ${h.lifted_by}` : ''}`);
          for (const t of h.unknown_transactions) {
            const paid = t.transfers.map((p) => `${p.amount_micros} to ${p.to}`).join(', ');
            helpers.out(`  unknown ${t.tx_id}${t.nonce === null ? '' : ` nonce ${t.nonce}`}${t.failed ? ' (failed)' : ''}${t.memo ? ` memo ${t.memo}` : ''}: ${paid || 'no USDC'}`);
          }
          for (const n of h.unknown_nonces) helpers.out(`  unknown nonce ${n}`);
          if (h.incomplete) helpers.out('  the check could not reach the books\u2019 last landed transaction');
        }
      }
      return 0;
    });
  }
  const chain = values.chain;
  if (!isChainIn(config.chainNames, chain)) return usage(USAGE, `--chain must be one of CHAINS (${config.chainNames.join(', ')})`);
  if (verb === 'attach') {
    if (!values.tx) return usage(USAGE, '--tx is required');
    return helpers.withDatabase(config, async (pool) => {
      const deps = { pool, clock: systemClock, config };
      const audit = cliAudit('books.attach', [chain], { tx_id: values.tx, payment_intent_ids: values.payment ?? null });
      return refusable(async () => {
        const result = await recordingRefusals(deps, audit, () =>
          attachUnknownTransaction(deps, { chain, txId: values.tx!, payments: values.payment ?? null, audit }),
        );
        if (values.json) helpers.out(JSON.stringify(result));
        else helpers.out(`${result.tx_id} attached to ${result.payment_intent_ids.join(', ')}: they settle from the chain`);
        return 0;
      });
    });
  }
  if ((values.tx === undefined) === (values.nonce === undefined)) return usage(USAGE, 'give --tx or --nonce');
  if (values.nonce !== undefined && !/^(0|[1-9][0-9]{0,15})$/.test(values.nonce)) return usage(USAGE, '--nonce must be a nonce');
  if (!values.reason?.trim()) return usage(USAGE, '--reason is required');
  return helpers.withDatabase(config, async (pool) => {
    const deps = { pool, clock: systemClock, config };
    const audit = cliAudit('books.foreign', [chain], { tx_id: values.tx ?? null, nonce: values.nonce ?? null, reason: values.reason });
    return refusable(async () => {
      const result = await recordingRefusals(deps, audit, () =>
        declareForeign(deps, {
          chain,
          txId: values.tx ?? null,
          nonce: values.nonce === undefined ? null : Number(values.nonce),
          reason: values.reason!,
          audit,
        }),
      );
      if (values.json) helpers.out(JSON.stringify(result));
      else helpers.out(`${result.tx_id ?? `nonce ${result.nonce}`} declared foreign by ${result.declared_by} and ${result.approved_by}`);
      return 0;
    });
  });
}
