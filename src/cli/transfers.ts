// `stableroute simulate transfer` (a transfer from outside on a simulated chain) and `intents refund` (an operator
// attaches a returned payout to its payment, decision 126). Exit codes: 0 ok, 1 refused, 2 usage.
import { parseArgs } from 'node:util';
import { recordExternalTransfers, SimulatedTransferRefused, type ExternalTransfer } from '../chains/simulated/external-transfer.js';
import { systemClock } from '../clock.js';
import { envName, type Config } from '../config.js';
import { attachRefund } from '../core/treasury/deposits/attach.js';
import { isWellFormedAddress } from '../domain/addresses.js';
import { isChainIn, type Chain } from '../domain/chain.js';
import { decimalsOf, USDC_DECIMALS } from '../ledger/currencies.js';
import { AmountError, parseUnits } from '../money.js';
import { refusable, usage } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';
import type { CliHelpers } from './policies.js';

const SIMULATE_USAGE = `usage: stableroute simulate transfer --chain CHAIN --from ADDRESS --to ADDRESS [--usdc N] [--native N] [--json]
       a transfer from outside on a simulated chain (NAME_ADAPTER=simulated), written to the
       simulator's state in the service's database; both amounts given: two transfers in one block
`;
const REFUND_USAGE = `usage: stableroute intents refund PAYMENT_INTENT_ID --tx TX_ID [--json]
`;

/** Parses --usdc and --native into the smallest units of each; a problem's text instead when one is not an amount. */
export function transferAmounts(chain: Chain, usdc: string | undefined, native: string | undefined): { usdc: bigint; native: bigint } | string {
  try {
    const amounts = {
      usdc: usdc === undefined ? 0n : parseUnits(usdc, USDC_DECIMALS),
      native: native === undefined ? 0n : parseUnits(native, decimalsOf(chain, 'native')),
    };
    if (amounts.usdc < 0n || amounts.native < 0n || (usdc !== undefined && amounts.usdc === 0n) || (native !== undefined && amounts.native === 0n)) {
      return 'amounts must be positive';
    }
    if (amounts.usdc === 0n && amounts.native === 0n) return 'give --usdc N, --native N or both';
    return amounts;
  } catch (error) {
    if (error instanceof AmountError || error instanceof RangeError) return `not an amount: ${error.message}`;
    throw error;
  }
}

export async function simulateCommand(args: string[], config: Config, helpers: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      usdc: { type: 'string' },
      native: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals[0] !== 'transfer' || positionals.length !== 1) return usage(SIMULATE_USAGE);
  const chain = values.chain;
  if (!isChainIn(config.chainNames, chain)) return usage(SIMULATE_USAGE, `--chain must be one of CHAINS (${config.chainNames.join(', ')})`);
  for (const flag of ['from', 'to'] as const) {
    const address = values[flag];
    if (address === undefined || !isWellFormedAddress(chain, address)) return usage(SIMULATE_USAGE, `--${flag} must be a ${chain} address`);
  }
  const amounts = transferAmounts(chain, values.usdc, values.native);
  if (typeof amounts === 'string') return usage(SIMULATE_USAGE, amounts);
  if (config.chains[chain]!.adapter !== 'simulated') {
    process.stderr.write(`${chain} is not simulated here (${envName(chain)}_ADAPTER=rpc): use \`stableroute devnet fund\` on a devnet\n`);
    return 1;
  }
  // A context, not just a database: the simulated network's genesis runs with the adapters, so this works on a
  // database the service has not started on yet.
  return helpers.withContext(config, async (ctx) => {
    const at = systemClock.now();
    const base = { chain, from: values.from!, to: values.to!, at };
    const transfers: ExternalTransfer[] = [
      ...(amounts.usdc > 0n ? [{ ...base, currency: 'USDC' as const, amountUnits: amounts.usdc }] : []),
      ...(amounts.native > 0n ? [{ ...base, currency: 'native' as const, amountUnits: amounts.native }] : []),
    ];
    let txIds: string[];
    try {
      txIds = await recordExternalTransfers(ctx.pool, config.simSeed, transfers);
    } catch (error) {
      if (!(error instanceof SimulatedTransferRefused)) throw error;
      process.stderr.write(`${error.message}\n`);
      return 1;
    }
    if (values.json) helpers.out(JSON.stringify({ chain, tx_ids: txIds }));
    else for (const [i, txId] of txIds.entries()) helpers.out(`${chain} ${transfers[i]!.currency} transfer ${txId}`);
    return 0;
  });
}

export async function intentsRefundCommand(args: string[], config: Config, helpers: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { tx: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  if (positionals[0] !== 'refund' || positionals.length !== 2 || !values.tx) return usage(REFUND_USAGE);
  return helpers.withDatabase(config, async (pool) => {
    return refusable(async () => {
      const audit = cliAudit('payment.refund', [positionals[1]!], { tx_id: values.tx });
      const result = await recordingRefusals({ pool, config }, audit, () => attachRefund({ pool, clock: systemClock, config }, positionals[1]!, values.tx!, audit));
      helpers.out(values.json ? JSON.stringify(result) : `${result.payment_intent_id}: refund of ${result.refund_usdc} USDC booked from ${result.tx_id}`);
      return 0;
    });
  });
}
