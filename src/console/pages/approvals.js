// Approvals (GET /admin/approvals): payments held by their merchant's threshold, withdrawals above
// WITHDRAWAL_APPROVAL_ABOVE_USD, payout batches held whole (one row, decision 178) and forced failures another operator
// requested (decision 181), oldest first, each with who requested it, who gave a first approval and how many approvals
// it still needs ("1 of 2", decision 103). Approve and Reject (POST /admin/payment_intents/:id/approve|reject, or
// /admin/payout_batches/:id/... for a batch) are offered to roles with the approve permission; Approve is not offered to
// whoever requested it or gave its first approval, and if the service refuses anyway (403 SELF_APPROVAL, or
// NAMED_OPERATOR_REQUIRED for the break-glass token, from another tab) the dialog says why.
import { html } from '../html.js';
import { useState } from 'preact/hooks';
import { api, post } from '../api.js';
import { chainLabel, ChainName } from '../chains.js';
import { ConfirmDialog, Empty, ErrorNote, Hash, Panel, Toast, useResource } from '../components.js';
import { ago, dateTime, usd } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { href } from '../router.js';
import { useCan, useSession, Who } from '../session.js';

/** "1 of 2": the approvals given and needed. */
export function ApprovalCount({ given, required }) {
  const tone = given >= required ? 'tone-good' : given > 0 ? 'tone-progress' : 'tone-alert';
  return html`<span class=${`badge ${tone}`} data-testid="approval-count">${given} of ${required}</span>`;
}

/** Why the signed-in operator may not approve this one (four-eyes), or null. */
function ownPart(me, approval) {
  if (approval.requested_by === me.actor) return 'You requested it: another approver must approve it.';
  if (approval.first_approved_by === me.actor) return 'You gave its first approval: a second approver must give the other.';
  return null;
}

/** What the service did, in words, for the toast. */
export const approvalOutcomeText = (result) => {
  const what = result.payout_batch_id ? `${result.payout_batch_id} (${result.payments} payments)` : result.payment_intent_id;
  const forced = result.requested_action === 'force_fail';
  if (result.approval === 'approved') {
    return forced ? `${what}: forced failure approved; it failed and its funds were released` : `${what} approved (${result.approvals} of ${result.approvals_required}): its execution is queued`;
  }
  if (result.approval === 'pending') return `${what}: approval ${result.approvals} of ${result.approvals_required} recorded; another approver must give the next`;
  return forced ? `${what}: forced failure rejected; it stays in manual review` : `${what} rejected: it failed and its funds were released`;
};

/**
 * Approve and Reject for a payment waiting for approval. `approval`: {requested_by, first_approved_by, approvals,
 * approvals_required, payout_batch_id?, requested_action?}; `summary`: what the dialog shows about the payment.
 * onDone(result) after the service agreed.
 */
export function ApprovalActions({ id, approval, summary, onDone }) {
  const { me } = useSession();
  const canApprove = useCan('approve');
  const [open, setOpen] = useState(null);
  const [reason, setReason] = useState('');
  if (!canApprove) return null;
  const own = ownPart(me, approval);
  // A payout batch held whole is decided as one (decision 178).
  const batch = approval.payout_batch_id ?? null;
  const forced = approval.requested_action === 'force_fail';
  const path = batch ? `/admin/payout_batches/${encodeURIComponent(batch)}` : `/admin/payment_intents/${encodeURIComponent(id)}`;
  const subject = batch ?? id;
  const run = async () => {
    const body = reason.trim() ? { reason: reason.trim() } : {};
    onDone?.(await post(`${path}/${open}`, body));
  };
  const next = approval.approvals + 1;
  return html`<div class="actions compact" data-testid="approval-actions">
    ${own ? html`<span class="muted small own-part" data-testid="own-part">${own}</span>` : html`<button type="button" class="button primary" data-action="approve" onClick=${() => setOpen('approve')}>Approve</button>`}
    <button type="button" class="button danger-outline" data-action="reject" onClick=${() => setOpen('reject')}>Reject</button>
    ${open
      ? html`<${ConfirmDialog}
          title=${open === 'approve' ? `Approve ${forced ? 'the forced failure of ' : ''}${subject}?` : `Reject ${forced ? 'the forced failure of ' : ''}${subject}?`}
          description=${html`${summary}
            ${open === 'approve'
              ? html`<p>${next < approval.approvals_required
                  ? `This is approval ${next} of ${approval.approvals_required}: a second approver must approve it before anything happens.`
                  : forced
                    ? 'The payment fails now and its funds are released, although its transfer may still land (unless it settled meanwhile).'
                    : batch
                      ? `The executions of all ${approval.payments} payments are queued now: the funds leave the treasury.`
                      : 'Its execution is queued now: the funds leave the treasury.'}</p>`
              : html`<p>${forced
                  ? 'The request is dropped: the payment stays in manual review with its funds where they are.'
                  : batch
                    ? `Each of its ${approval.payments} payments fails (approval_rejected) and its reserved funds are released; nothing is sent.`
                    : 'The payment fails (approval_rejected) and its reserved funds are released; nothing is sent.'}</p>`}
            <label class="reason">Reason (kept with the decision and in the audit log)
              <input type="text" maxlength="500" value=${reason} onInput=${(e) => setReason(e.currentTarget.value)} />
            </label>`}
          confirmLabel=${open === 'approve' ? 'Approve' : 'Reject'}
          tone=${open === 'approve' ? 'primary' : 'danger'}
          onConfirm=${run}
          onClose=${() => {
            setOpen(null);
            setReason('');
          }}
        />`
      : null}
  </div>`;
}

/** Who asked for the approval, in words: an operator (a withdrawal) or the merchant's threshold. */
export function RequestedBy({ approval, threshold }) {
  if (approval.requested_by) return html`<${Who} id=${approval.requested_by} />`;
  return html`<span class="muted">merchant threshold${threshold !== undefined ? ` (above ${usd(threshold)})` : ''}</span>`;
}

/** What the approval does, for the Kind column: a payment, a whole batch, or a forced failure. */
function KindOf({ a }) {
  if (a.payout_batch_id) return html`<span class="badge kind-payout_batch">payout batch · ${a.payments} payments</span>`;
  if (a.requested_action === 'force_fail') return html`<span class="badge tone-alert">force failed · ${a.kind}</span>`;
  return html`<span class=${`badge kind-${a.kind}`}>${a.kind}</span>`;
}

function Row({ a, onDone }) {
  return html`<tr data-id=${a.payout_batch_id ?? a.payment_intent_id} data-kind=${a.kind} data-requested=${a.requested_action ?? 'send'}>
    <td>
      ${a.payout_batch_id ? html`<span class="mono" data-testid="batch-id">${a.payout_batch_id}</span><br />first ` : null}<a class="mono" href=${href(`/payments/${a.payment_intent_id}`)}>${a.payment_intent_id}</a>
    </td>
    <td><${KindOf} a=${a} /></td>
    <td class="num">${usd(a.amount_usd)}</td>
    <td><${ChainName} chain=${a.selected_chain} /></td>
    <td><${Hash} value=${a.destination_address} keep=${6} /></td>
    <td data-testid="requested-by"><${RequestedBy} approval=${a} threshold=${a.approval_above_usd} /></td>
    <td title=${dateTime(a.requested_at)}>${ago(a.requested_at)}</td>
    <td><${ApprovalCount} given=${a.approvals} required=${a.approvals_required} />${a.first_approved_by ? html` <${Who} id=${a.first_approved_by} />` : null}</td>
    <td>
      <${ApprovalActions}
        id=${a.payment_intent_id}
        approval=${a}
        summary=${html`<p>${a.payout_batch_id
            ? html`Payout batch <code>${a.payout_batch_id}</code> · ${a.payments} payments, ${usd(a.amount_usd)} in all`
            : html`<code>${a.payment_intent_id}</code> · ${a.requested_action === 'force_fail' ? 'forced failure of a ' : ''}${a.kind} of ${usd(a.amount_usd)} on ${chainLabel(a.selected_chain)} to <code>${a.destination_address}</code>`}</p>
          <p>Requested by <${RequestedBy} approval=${a} threshold=${a.approval_above_usd} /> ${ago(a.requested_at)}.</p>`}
        onDone=${onDone}
      />
    </td>
  </tr>`;
}

export function ApprovalsPage() {
  const [toast, setToast] = useState(null);
  const list = useResource(() => api('/admin/approvals'), 'approvals');
  const refresh = useThrottled(() => list.reload(), 1000);
  // A first approval changes no status (no event), but a decision does, and so does a new held payment.
  useLiveEvents(() => refresh());
  const rows = list.data ?? [];
  const done = (result) => {
    setToast(approvalOutcomeText(result));
    list.reload();
  };
  return html`<div class="page">
    <${Panel} title="Waiting for approval (oldest first)" id="approvals" actions=${html`<button class="button" onClick=${() => list.reload()} disabled=${list.loading}>Refresh</button>`}>
      <${ErrorNote} error=${list.error} />
      ${list.data && rows.length === 0 ? html`<${Empty}>Nothing waits for an approval.</${Empty}>` : null}
      ${rows.length
        ? html`<table class="table" data-testid="approvals">
            <thead><tr><th>Payment</th><th>Kind</th><th class="num">Amount</th><th>Chain</th><th>Destination</th><th>Requested by</th><th>Waiting</th><th>Approvals</th><th></th></tr></thead>
            <tbody>${rows.map((a) => html`<${Row} key=${`${a.requested_action}:${a.payout_batch_id ?? a.payment_intent_id}`} a=${a} onDone=${done} />`)}</tbody>
          </table>`
        : null}
    </${Panel}>
    <p class="muted small">
      A withdrawal above WITHDRAWAL_APPROVAL_ABOVE_USD (with those sent unapproved in its window) needs one approver other than
      whoever requested it; a payment or a payout batch held by its merchant's threshold needs two different approvers when
      APPROVALS_REQUIRE_SECOND_OPERATOR is on; a forced failure needs an approver other than whoever forced it (decisions
      103, 177-181).
    </p>
    <${Toast} message=${toast} onDone=${() => setToast(null)} />
  </div>`;
}
