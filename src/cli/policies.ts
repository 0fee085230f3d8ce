// `stableroute merchants policy|addresses` and `intents approve|reject`: spending policies from the command line
// (decisions 6-11). Exit codes as everywhere: 0 ok, 1 refused by the service, 2 usage.
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { addAddress, addressBook, removeAddress, type AddressRow } from '../core/merchants/address-book.js';
import type { AppContext } from '../core/context.js';
import { approvePayment, listPendingApprovals, rejectPayment } from '../core/operators/transitions/approve.js';
import { getMerchantPolicy, updateMerchantPolicy, type LimitChange, type MerchantPolicy, type PolicyChange } from '../core/merchants/policies.js';
import type { Pool } from '../db/pool.js';
import { isChainIn } from '../domain/chain.js';
import { addressView, pendingApprovalView, policyView } from '../api/views/policies.js';
import { systemClock } from '../clock.js';
import { formatUsdc, MAX_AMOUNT_USD, parseBoundedUsdc } from '../money.js';
import { refusable, usage } from './exits.js';
import { cliAudit, recordingRefusals } from './actor.js';

/** What main.ts lends these commands: database and full-context runners, and stdout. */
export interface CliHelpers {
  withDatabase<T>(config: Config, fn: (pool: Pool) => Promise<T>): Promise<T>;
  withContext<T>(config: Config, fn: (ctx: AppContext) => Promise<T>): Promise<T>;
  out(line: string): void;
}

export const POLICY_USAGE = `usage: stableroute merchants policy MERCHANT_ID [--max-payment-usd N|none|default] [--daily-limit-usd N|none|default]
         [--allowlist on|off|default] [--approval-above-usd N|none|default] [--approval-above-usd-per-day N|none|default]
         [--rate-limit-per-minute N|default] [--reset] [--json]
       N sets the merchant's own limit, none lifts the limit for this merchant, default follows the service setting again
`;
export const ADDRESSES_USAGE = `usage: stableroute merchants addresses add|remove MERCHANT_ID --chain ethereum|solana --address A [--label L] [--json]
       stableroute merchants addresses list MERCHANT_ID [--chain ethereum|solana] [--json]
`;

export const APPROVAL_USAGE = `usage: stableroute intents approve|reject PAYMENT_INTENT_ID [--reason TEXT] [--json]
       stableroute intents approvals [--json]
`;

class UsageError extends Error {}

function limitChange(flag: string, raw: string | undefined): LimitChange | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'none' || raw === 'default') return raw === 'none' ? null : 'default';
  try {
    return parseBoundedUsdc(raw);
  } catch {
    throw new UsageError(`--${flag} expects a USD amount (up to 6 decimals, at most ${MAX_AMOUNT_USD}), none or default, got "${raw}"`);
  }
}

function policyChange(values: Record<string, string | boolean | undefined>): PolicyChange {
  const change: PolicyChange = {};
  const max = limitChange('max-payment-usd', values['max-payment-usd'] as string | undefined);
  const daily = limitChange('daily-limit-usd', values['daily-limit-usd'] as string | undefined);
  const approval = limitChange('approval-above-usd', values['approval-above-usd'] as string | undefined);
  const perDay = limitChange('approval-above-usd-per-day', values['approval-above-usd-per-day'] as string | undefined);
  if (max !== undefined) change.maxPaymentMicros = max;
  if (daily !== undefined) change.dailyLimitMicros = daily;
  if (approval !== undefined) change.approvalAboveMicros = approval;
  if (perDay !== undefined) change.approvalAbovePerDayMicros = perDay;
  const allowlist = values.allowlist as string | undefined;
  if (allowlist !== undefined) {
    if (!['on', 'off', 'default'].includes(allowlist)) throw new UsageError(`--allowlist expects on, off or default, got "${allowlist}"`);
    change.allowlist = allowlist === 'default' ? 'default' : allowlist === 'on';
  }
  const rate = values['rate-limit-per-minute'] as string | undefined;
  if (rate !== undefined) {
    if (rate !== 'default' && !/^\d{1,7}$/.test(rate)) throw new UsageError(`--rate-limit-per-minute expects a whole number (0: no limit) or default, got "${rate}"`);
    change.rateLimitPerMinute = rate === 'default' ? 'default' : Number(rate);
  }
  if (values.reset) change.reset = true;
  return change;
}

function printPolicy(p: MerchantPolicy, out: (line: string) => void): void {
  const limit = (micros: bigint | null) => (micros === null ? 'none' : `${formatUsdc(micros)} USD`);
  const s = p.policy.sources;
  out(`spending policy of ${p.merchant_id}`);
  out(`  max payment      ${limit(p.policy.maxPaymentMicros).padEnd(18)} (${s.maxPaymentMicros})`);
  out(`  daily limit      ${limit(p.policy.dailyLimitMicros).padEnd(18)} (${s.dailyLimitMicros}; rolling 24 hours)`);
  out(`  approval above   ${limit(p.policy.approvalAboveMicros).padEnd(18)} (${s.approvalAboveMicros})`);
  out(`  approval per day ${limit(p.policy.approvalAbovePerDayMicros).padEnd(18)} (${s.approvalAbovePerDayMicros}; sent without approval, rolling 24 hours)`);
  out(`  allowlist        ${(p.policy.allowlist ? 'on' : 'off').padEnd(18)} (${s.allowlist})`);
  out(`  cooling-off      ${`${p.addressCoolingOffSeconds} s`.padEnd(18)} (service)`);
  out(`  rate limit       ${(p.rateLimitPerMinute === 0 ? 'none' : `${p.rateLimitPerMinute}/min`).padEnd(18)} (${p.rateLimitSource})`);
}

export async function merchantsPolicyCommand(args: string[], config: Config, h: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      'max-payment-usd': { type: 'string' },
      'daily-limit-usd': { type: 'string' },
      'approval-above-usd': { type: 'string' },
      'approval-above-usd-per-day': { type: 'string' },
      allowlist: { type: 'string' },
      'rate-limit-per-minute': { type: 'string' },
      reset: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
    },
  });
  if (positionals.length !== 1) return usage(POLICY_USAGE);
  let change: PolicyChange;
  try {
    change = policyChange(values);
  } catch (error) {
    if (error instanceof UsageError) return usage(POLICY_USAGE, error.message);
    throw error;
  }
  const merchantId = positionals[0]!;
  return h.withDatabase(config, (pool) =>
    refusable(async () => {
      const changed = Object.keys(change).length > 0;
      const audit = cliAudit('merchant.policy', [merchantId], { ...change });
      const policy = changed
        ? await recordingRefusals({ pool, config }, audit, () => updateMerchantPolicy(pool, config, merchantId, change, systemClock.now(), audit))
        : await getMerchantPolicy(pool, config, merchantId);
      if (values.json) h.out(JSON.stringify(policyView(policy)));
      else printPolicy(policy, h.out);
      return 0;
    }),
  );
}

function printAddress(a: AddressRow, out: (line: string) => void): void {
  out(`${a.chain.padEnd(9)} ${a.address}  usable from ${a.usable_from.toISOString()}${a.label ? `  ${a.label}` : ''}`);
}

export async function merchantsAddressesCommand(args: string[], config: Config, h: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      chain: { type: 'string' },
      address: { type: 'string' },
      label: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const [action, merchantId, ...rest] = positionals;
  if (!action || !['add', 'remove', 'list'].includes(action) || !merchantId || rest.length > 0) return usage(ADDRESSES_USAGE);
  const chain = values.chain;
  if (chain !== undefined && !isChainIn(config.chainNames, chain)) return usage(ADDRESSES_USAGE, `--chain must be one of CHAINS (${config.chainNames.join(', ')}), got "${chain}"`);
  if (action !== 'list' && (!chain || !values.address?.trim())) return usage(ADDRESSES_USAGE, `addresses ${action} needs --chain and --address`);

  if (action === 'add') {
    // The chain adapter validates the address (and refuses the treasury), so this one needs the adapters.
    return h.withContext(config, (ctx) =>
      refusable(async () => {
        const audit = cliAudit('address_book.add', [merchantId], { chain, address: values.address, label: values.label });
        const input = { chain: chain!, address: values.address!, label: values.label ?? null };
        const { entry, created } = await recordingRefusals(ctx, audit, () => addAddress(ctx, merchantId, input, audit));
        if (values.json) h.out(JSON.stringify({ ...addressView(entry), created }));
        else {
          printAddress(entry, h.out);
          if (!created) h.out('(already in the address book; unchanged)');
        }
        return 0;
      }),
    );
  }
  return h.withDatabase(config, (pool) =>
    refusable(async () => {
      if (action === 'remove') {
        const audit = cliAudit('address_book.remove', [merchantId, chain!, values.address!.trim()]);
        const removed = await recordingRefusals({ pool, config }, audit, () => removeAddress({ pool, clock: systemClock, config }, merchantId, chain!, values.address!.trim(), audit));
        if (values.json) h.out(JSON.stringify(addressView(removed)));
        else h.out(`removed ${removed.chain} ${removed.address}`);
        return 0;
      }
      const entries = await addressBook(pool, merchantId, chain ?? null);
      if (values.json) h.out(JSON.stringify(entries.map(addressView)));
      else if (entries.length === 0) h.out('(no addresses)');
      else for (const entry of entries) printAddress(entry, h.out);
      return 0;
    }),
  );
}

/** `intents approve|reject ID` and `intents approvals` (what waits). */
export async function intentsApprovalCommand(args: string[], config: Config, h: CliHelpers): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { reason: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const [action, intentId, ...rest] = positionals;
  if (rest.length > 0 || (action === 'approvals' ? intentId !== undefined || values.reason !== undefined : !intentId)) return usage(APPROVAL_USAGE);
  if (action === 'approvals') {
    return h.withDatabase(config, async (pool) => {
      const waiting = (await listPendingApprovals({ pool, config }, 500)).map(pendingApprovalView);
      if (values.json) h.out(JSON.stringify(waiting));
      else if (waiting.length === 0) h.out('(no payment waits for approval)');
      else {
        for (const w of waiting) {
          const what = w.payout_batch_id ? `${w.payout_batch_id} (${w.payments} payments, first ${w.payment_intent_id})` : w.payment_intent_id;
          h.out(`${what}  ${w.merchant_id}  ${w.amount_usd} USD on ${w.selected_chain} to ${w.destination_address}  since ${w.requested_at}`);
        }
      }
      return 0;
    });
  }
  // Approval queues the execution job, so it needs the queue: a full context.
  return h.withContext(config, (ctx) =>
    refusable(async () => {
      const audit = cliAudit(`payment.${action}`, [intentId!], { reason: values.reason });
      const input = { reason: values.reason ?? null, audit };
      const decide = () => (action === 'approve' ? approvePayment(ctx, intentId!, input) : rejectPayment(ctx, intentId!, input));
      const result = await recordingRefusals(ctx, audit, decide);
      const progress = result.approval === 'pending' ? `, ${result.approvals} of ${result.approvals_required} approvals` : '';
      h.out(values.json ? JSON.stringify(result) : `${result.payment_intent_id}: ${result.approval}${progress} (${result.status})`);
      return 0;
    }),
  );
}
