// Withdrawals (decision 121): the operator sends treasury USDC out through the payouts' own lifecycle. Creating one
// reserves under the same lock as merchants' payments (the chain's treasury_available row, lockAvailable), so it can
// only take what is available, never what is reserved for a payment; the intent, its reserve posting and its
// execution job commit together. From there the execution worker signs once, the confirmation worker settles it to
// the `withdrawals` account, and reconciliation and `ledger verify` see it like any payout.
import { adapterOf } from '../../chains/port.js';
import { randomUUID } from 'node:crypto';
import { addSeconds } from '../../clock.js';
import { advisoryXactLockText, withTransaction } from '../../db/pool.js';
import { readApprovals, readApproval, insertApprovals, type ApprovalRow } from '../../db/queries/approvals.js';
import { readAttempts, type AttemptRow } from '../../db/queries/attempts.js';
import { readIntentsByKeys, type PaymentIntentRow } from '../../db/queries/intents.js';
import { insertCreatedIntents } from '../../db/queries/transitions.js';
import { insertQuotes, type QuoteRow } from '../../db/queries/quotes.js';
import { readVolumeWithoutApproval } from '../../db/queries/policies.js';
import { readWithdrawal, listWithdrawals, OPERATOR_MERCHANT_ID } from '../../db/queries/withdrawals.js';
import { isChainIn, type Chain } from '../../domain/chain.js';
import { AppError } from '../../domain/errors.js';
import { withdrawalNeedsApproval } from '../../domain/four-eyes.js';
import { RELEASED_STATUSES } from '../../domain/spending-policy.js';
import { newId } from '../../ids.js';
import { enqueueExecutions } from '../../jobs/queue.js';
import { movements } from '../../ledger/movements.js';
import { lockAvailable, postMany } from '../../ledger/store.js';
import { AmountError, formatUsdc, MAX_AMOUNT_MICROS, parseUsdc } from '../../money.js';
import { appendAudit, type AuditEntry } from '../operators/audit.js';
import type { AppContext } from '../context.js';
import { currencyOf, DEFAULT_TOKEN, isToken, potOf, type Token } from '../../domain/token.js';

export { OPERATOR_MERCHANT_ID };

/** The advisory lock every withdrawal checked against WITHDRAWAL_APPROVAL_ABOVE_USD takes (decision 177). */
const WITHDRAWAL_WINDOW_LOCK = 'withdrawal-approval-window';

export interface WithdrawalRequest {
  chain: string;
  to: string;
  /** Decimal USDC, e.g. "12.5"; at most 6 decimals. */
  amountUsdc: string;
  /** The token withdrawn, one of the chain's NAME_TOKENS (`--token`, the admin API's `token`); default usdc. */
  token?: string;
  /** Makes a retried request safe: the same key answers the first withdrawal. Generated when absent. */
  idempotencyKey?: string;
  /** Who asks (its actor is the requester four-eyes keeps from approving it), recorded in the same transaction. */
  audit: AuditEntry;
}

export interface WithdrawalRecord {
  intent: PaymentIntentRow;
  attempts: AttemptRow[];
  /** Present when the withdrawal was above WITHDRAWAL_APPROVAL_ABOVE_USD (decision 103). */
  approval: ApprovalRow | null;
}

export interface CreateWithdrawalResult extends WithdrawalRecord {
  replayed: boolean;
}

/** Checks the request without touching the database: a refusal changes nothing. */
export function parseWithdrawal(
  ctx: Pick<AppContext, 'adapters' | 'config'>,
  request: WithdrawalRequest,
): { chain: Chain; to: string; amountMicros: bigint; token: Token } {
  const chains = Object.keys(ctx.adapters);
  if (!isChainIn(chains, request.chain)) throw new AppError('INVALID_CHAIN', `unknown chain "${request.chain}": expected one of ${chains.join(', ')}`);
  const chain = request.chain;
  const to = request.to.trim();
  if (!adapterOf(ctx.adapters, chain).isValidAddress(to)) {
    throw new AppError('INVALID_DESTINATION', `"${to}" is not a valid ${chain} recipient (an address, not the treasury)`);
  }
  const amountMicros = usdcAmount(request.amountUsdc.trim());
  if (amountMicros === null || amountMicros <= 0n || amountMicros > MAX_AMOUNT_MICROS) {
    throw new AppError('INVALID_AMOUNT', `amount must be a positive USDC amount with at most 6 decimals, got "${request.amountUsdc}"`);
  }
  const token = request.token?.trim().toLowerCase() ?? DEFAULT_TOKEN;
  const configured = ctx.config.chains[chain]?.tokens.map((t) => t.token) ?? [DEFAULT_TOKEN];
  if (!isToken(token) || !configured.includes(token)) {
    throw new AppError('INVALID_TOKEN', `unknown token "${request.token}" on ${chain}: expected one of ${configured.join(', ')} (${chain.toUpperCase()}_TOKENS)`);
  }
  return { chain, to, amountMicros, token };
}

function usdcAmount(text: string): bigint | null {
  try {
    return parseUsdc(text);
  } catch (error) {
    if (error instanceof AmountError) return null;
    throw error;
  }
}

export async function createWithdrawal(ctx: AppContext, request: WithdrawalRequest): Promise<CreateWithdrawalResult> {
  const threshold = ctx.config.withdrawalApprovalAboveMicros;
  const { chain, to, amountMicros, token } = parseWithdrawal(ctx, request);
  const [verdict] = await ctx.screener.screen([{ chain, address: to, amountMicros }]);
  if (verdict!.hit) throw new AppError('RECIPIENT_SCREENED', `the ${chain} recipient is refused by sanctions screening`, { details: { chains: [chain] } });
  const idempotencyKey = request.idempotencyKey ?? `withdrawal-${randomUUID()}`;
  const created = await withTransaction(ctx.pool, async (tx) => {
    // 1. Load, under the locks: the key (a retried request waits for the first), then the chain's available funds,
    // the lock every reservation of this chain takes.
    await advisoryXactLockText(tx, JSON.stringify([OPERATOR_MERCHANT_ID, idempotencyKey]));
    const [existing] = await readIntentsByKeys(tx, [{ merchantId: OPERATOR_MERCHANT_ID, idempotencyKey }]);
    if (existing) {
      const same = existing.selected_chain === chain && existing.destination_address === to && existing.amount_micros === amountMicros && existing.token === token;
      if (!same) throw new AppError('IDEMPOTENCY_KEY_REUSED', `idempotency key "${idempotencyKey}" was used for another withdrawal`);
      return { intent: existing, replayed: true, approval: await readApproval(tx, existing.id) };
    }
    // The withdrawals of the rolling window, read under one lock that every withdrawal checked against the threshold
    // takes (before the treasury rows, as reservations lock their merchant first): two at once, on any chains, are
    // decided one after the other (decision 177).
    const now = ctx.clock.now();
    let leftWithoutApproval = 0n;
    if (threshold !== null) {
      await advisoryXactLockText(tx, WITHDRAWAL_WINDOW_LOCK);
      const since = new Date(now.getTime() - ctx.config.withdrawalApprovalWindowSeconds * 1000);
      leftWithoutApproval = await readVolumeWithoutApproval(tx, OPERATOR_MERCHANT_ID, since, RELEASED_STATUSES);
    }
    const available = (await lockAvailable(tx, [{ chain, token }])).get(potOf(chain, token)) ?? 0n;
    // 2. Decide.
    if (amountMicros > available) {
      throw new AppError(
        'INSUFFICIENT_BALANCE',
        `the ${chain} treasury has ${formatUsdc(available)} ${currencyOf(token)} available (funds reserved for payments excluded); cannot withdraw ${formatUsdc(amountMicros)}`,
      );
    }
    // 3. Persist: an internal quote (every intent names the quote it came from), the intent, its reservation, its job.
    const quote: QuoteRow = {
      id: newId('quo'),
      merchant_id: OPERATOR_MERCHANT_ID,
      amount_micros: amountMicros,
      priority: 'reliable',
      destinations: { [chain]: to },
      candidate_routes: [],
      recommended_route: chain,
      tokens: null,
      recommended_token: token,
      scoring_details: [],
      chain_health: [],
      treasury_balances: [],
      created_at: now,
      expires_at: addSeconds(now, 0),
    };
    const intent: PaymentIntentRow = {
      id: newId('pi'),
      merchant_id: OPERATOR_MERCHANT_ID,
      quote_id: quote.id,
      idempotency_key: idempotencyKey,
      amount_micros: amountMicros,
      status: 'route_selected',
      selected_chain: chain,
      destination_address: to,
      created_at: now,
      updated_at: now,
      kind: 'withdrawal',
      token,
    };
    await insertQuotes(tx, [quote]);
    await insertCreatedIntents(tx, [intent], now);
    await postMany(tx, [{ movement: movements.reserve(chain, amountMicros, currencyOf(intent.token)), context: { paymentIntentId: intent.id, at: now } }]);
    // Above the four-eyes threshold (with what left without approval in the window) the withdrawal waits, reserved,
    // for an approver other than its requester; the approval queues its execution (core/operators/transitions/approve.ts).
    const held = withdrawalNeedsApproval(threshold, amountMicros, leftWithoutApproval);
    const approvals = held
      ? await insertApprovals(tx, [{ intentId: intent.id, thresholdMicros: threshold!, requestedBy: request.audit.actor.id, payoutBatchId: null }], now)
      : null;
    const approval = approvals?.get(intent.id) ?? null;
    if (!held) await enqueueExecutions(ctx.boss, tx, [{ payment_intent_id: intent.id, attempt: 1 }]);
    await appendAudit(ctx.config, tx, { ...request.audit, targets: [intent.id, ...request.audit.targets] }, 'ok', now);
    return { intent, replayed: false, approval };
  });
  // A new withdrawal has no attempt yet; a replayed one may.
  const attempts = created.replayed ? ((await readAttempts(ctx.pool, [created.intent.id])).get(created.intent.id) ?? []) : [];
  return { ...created, attempts };
}

export async function getWithdrawal(ctx: Pick<AppContext, 'pool'>, id: string): Promise<WithdrawalRecord | null> {
  const intent = await readWithdrawal(ctx.pool, id);
  if (!intent) return null;
  return { intent, attempts: (await readAttempts(ctx.pool, [id])).get(id) ?? [], approval: await readApproval(ctx.pool, id) };
}

export async function withdrawals(ctx: Pick<AppContext, 'pool'>, page: { limit: number; before?: string }): Promise<WithdrawalRecord[]> {
  const intents = await listWithdrawals(ctx.pool, page);
  const ids = intents.map((i) => i.id);
  const [attempts, approvals] = await Promise.all([readAttempts(ctx.pool, ids), readApprovals(ctx.pool, ids)]);
  return intents.map((intent) => ({ intent, attempts: attempts.get(intent.id) ?? [], approval: approvals.get(intent.id) ?? null }));
}
