// Payments as operators see them (the console, GET /admin/payments): pages with filters and search, one payment with
// everything that happened to it, and the actions its status allows. Reads only; actions go through
// src/core/operators/transitions (resolve.ts, cancel.ts), exactly as the CLI's.
import { adapterOf } from '../../../chains/port.js';
import { readApproval, type ApprovalRow } from '../../../db/queries/approvals.js';
import { readAttempts, type AttemptRow } from '../../../db/queries/attempts.js';
import { countByStatus, listIntents, listTransitions, type IntentCursor, type IntentFilter, type IntentListRow, type TransitionRow } from '../../../db/queries/intent-list.js';
import { readIntent, type PaymentIntentRow } from '../../../db/queries/intents.js';
import { readDeliveries, listEventsOfIntent, type DeliveryRow, type WebhookEventRecord } from '../../../db/queries/webhook-history.js';
import { AppError } from '../../../domain/errors.js';
import { operatorActions, type LiveTransaction, type OperatorActions } from '../../../domain/operator-actions.js';
import type { PaymentStatus } from '../../../domain/payment-intent.js';
import { ledgerTransactionsOfIntent, type IntentLedgerTransaction } from '../../../ledger/intent-postings.js';
import { readsOf, type AppContext } from '../../context.js';
import { ADMIN_PAGE_ROWS_DEFAULT } from '../../../bounds.js';
import { approvalsGiven, approvalsRequired, namedOnly, type FourEyesConfig } from '../transitions/approve.js';

export interface PaymentPage {
  rows: (IntentListRow & { actions: OperatorActions })[];
  /** Where the next (older) page starts; null on the last page. */
  next: IntentCursor | null;
}

export async function listPayments(
  ctx: Pick<AppContext, 'pool' | 'reads' | 'adapters'>,
  filter: IntentFilter,
  after: IntentCursor | null,
  limit = ADMIN_PAGE_ROWS_DEFAULT,
): Promise<PaymentPage> {
  // One row more than asked tells whether another page follows, without a count over the whole filter. A list decides
  // nothing: off the read server when there is one (decision 195); the payment's own page and actions read the primary.
  const rows = await listIntents(readsOf(ctx), filter, after, limit + 1);
  const page = rows.slice(0, limit);
  return {
    rows: page.map((row) => ({ ...row, actions: actionsOf(ctx, row, row.live_purpose) })),
    next: rows.length > limit ? page.at(-1)!.cursor : null,
  };
}

function actionsOf(
  ctx: Pick<AppContext, 'adapters'>,
  intent: Pick<PaymentIntentRow, 'status' | 'selected_chain'>,
  live: LiveTransaction,
): OperatorActions {
  const adapter = adapterOf(ctx.adapters, intent.selected_chain);
  const chain = { replace: adapter.prepareReplacement !== undefined, cancelOnChain: adapter.prepareCancel !== undefined };
  return operatorActions(intent.status, chain, live);
}

export async function paymentCounts(ctx: Pick<AppContext, 'pool' | 'reads'>): Promise<Map<PaymentStatus, number>> {
  return countByStatus(readsOf(ctx));
}

export interface PaymentRecord {
  intent: PaymentIntentRow;
  transitions: TransitionRow[];
  attempts: AttemptRow[];
  ledger: IntentLedgerTransaction[];
  events: (WebhookEventRecord & { deliveries: DeliveryRow[] })[];
  actions: OperatorActions;
  /** The operator approval of a held payment or withdrawal (decision 103), with the approvals given and needed. */
  approval: { row: ApprovalRow; given: number; required: number } | null;
}

export async function paymentRecord(ctx: Pick<AppContext, 'pool' | 'adapters'> & { config: FourEyesConfig }, id: string): Promise<PaymentRecord> {
  const intent = await readIntent(ctx.pool, id);
  if (!intent) throw new AppError('PAYMENT_INTENT_NOT_FOUND', `payment intent ${id} was not found`);
  const [transitions, attempts, ledger, events, approval] = await Promise.all([
    listTransitions(ctx.pool, id),
    readAttempts(ctx.pool, [id]),
    ledgerTransactionsOfIntent(ctx.pool, id),
    listEventsOfIntent(ctx.pool, id),
    readApproval(ctx.pool, id),
  ]);
  const required = approval ? approvalsRequired(approval, ctx.config, await namedOnly(ctx.pool, ctx.config)) : 0;
  const own = attempts.get(id) ?? [];
  const deliveries = await readDeliveries(
    ctx.pool,
    events.map((e) => e.id),
  );
  return {
    intent,
    transitions,
    attempts: own,
    ledger,
    events: events.map((e) => ({ ...e, deliveries: deliveries.get(e.id) ?? [] })),
    // The newest live attempt, as readLiveAttempt finds it.
    actions: actionsOf(ctx, intent, own.findLast((a) => a.status === 'signed' || a.status === 'broadcasted')?.purpose ?? null),
    approval: approval ? { row: approval, given: approvalsGiven(approval, required), required } : null,
  };
}
