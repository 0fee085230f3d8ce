// Withdrawals (decisions 103, 121): the list (GET /admin/withdrawals) with who requested, approved and decided each one
// that waited for approval, and, for roles with the administer permission, a form that requests one (POST
// /admin/withdrawals) behind a confirmation. Above WITHDRAWAL_APPROVAL_ABOVE_USD it waits, reserved, for an approver
// other than its requester (the Approvals view).
import { html } from '../html.js';
import { useState } from 'preact/hooks';
import { api, post } from '../api.js';
import { chainLabel, ChainName, ChainOptions, useChains } from '../chains.js';
import { ConfirmDialog, Empty, ErrorNote, Panel, Status, Toast, useResource } from '../components.js';
import { ago, decimal } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { href } from '../router.js';
import { useCan, Who } from '../session.js';

const PAGE = 20;

/** A key that makes a retried request answer the first withdrawal (crypto.randomUUID needs a secure context; this does not). */
function idempotencyKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `console-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** Who asked and who decided, for a withdrawal that waited for approval. */
function ApprovalCell({ approval }) {
  if (!approval) return html`<span class="muted">not needed</span>`;
  const requested = html`requested by <${Who} id=${approval.requested_by} />`;
  if (approval.status === 'pending') return html`<span data-approval="pending"><span class="badge tone-alert">waiting</span> ${requested}</span>`;
  const verb = approval.status === 'approved' ? 'approved' : approval.status === 'rejected' ? 'rejected' : approval.status;
  return html`<span data-approval=${approval.status}>${verb} by <${Who} id=${approval.decided_by} /> <span class="muted small">· ${requested}</span></span>`;
}

function NewWithdrawal({ onDone }) {
  // The first chain in CHAINS until the operator picks another.
  const [form, setForm] = useState({ chain: useChains()[0] ?? '', to: '', amount: '' });
  const [key, setKey] = useState(null);
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const ready = form.chain !== '' && form.to.trim() !== '' && /^\d+(\.\d{1,6})?$/.test(form.amount.trim());
  const run = async () => {
    const result = await post('/admin/withdrawals', { chain: form.chain, to: form.to.trim(), amount_usdc: form.amount.trim(), idempotency_key: key });
    setForm({ ...form, to: '', amount: '' });
    onDone(result);
  };
  return html`<form class="filters withdraw" data-testid="new-withdrawal" onSubmit=${(e) => { e.preventDefault(); if (ready) setKey(idempotencyKey()); }}>
    <select name="chain" aria-label="Chain" value=${form.chain} onChange=${set('chain')}>
      <${ChainOptions} />
    </select>
    <input name="to" class="address" placeholder="Recipient address" aria-label="Recipient address" value=${form.to} onInput=${set('to')} spellcheck="false" />
    <input name="amount" placeholder="USDC, e.g. 5000" aria-label="USDC amount" inputmode="decimal" value=${form.amount} onInput=${set('amount')} />
    <button class="button primary" type="submit" disabled=${!ready}>Request withdrawal</button>
    ${key
      ? html`<${ConfirmDialog}
          title="Withdraw treasury USDC?"
          description=${html`<p>${decimal(form.amount.trim())} USDC on ${chainLabel(form.chain)} to <code>${form.to.trim()}</code>.</p>
            <p>The amount is reserved from available funds now and sent by the workers like a payout. Above WITHDRAWAL_APPROVAL_ABOVE_USD it
            waits for an approver other than you (Approvals), and nothing is sent until then.</p>`}
          confirmLabel="Request withdrawal"
          tone="danger"
          onConfirm=${run}
          onClose=${() => setKey(null)}
        />`
      : null}
  </form>`;
}

export function Withdrawals() {
  const [toast, setToast] = useState(null);
  const canAdminister = useCan('administer');
  const list = useResource(() => api(`/admin/withdrawals?limit=${PAGE}`), 'withdrawals');
  const refresh = useThrottled(() => list.reload(), 2000);
  useLiveEvents(() => refresh());
  const rows = list.data?.data ?? [];
  const created = (w) => {
    setToast(w.approval?.status === 'pending' ? `${w.id} requested: it waits for an approver other than you` : `${w.id} requested: the workers send it`);
    list.reload();
  };
  return html`<${Panel} title="Withdrawals" id="withdrawals">
    ${canAdminister ? html`<div class="panel-form"><${NewWithdrawal} onDone=${created} /></div>` : null}
    <${ErrorNote} error=${list.error} />
    ${rows.length === 0
      ? html`<${Empty}>${list.loading ? 'Loading…' : 'No withdrawals. stableroute treasury withdraw --chain C --to ADDRESS --usdc N sends treasury USDC out.'}</${Empty}>`
      : html`<table class="table" data-testid="withdrawals">
          <thead><tr><th>Withdrawal</th><th>Chain</th><th class="num">USDC</th><th>To</th><th>Status</th><th>Approval</th><th>Created</th></tr></thead>
          <tbody>
            ${rows.map(
              (w) => html`<tr key=${w.id} data-id=${w.id}><td><a href=${href(`/payments/${w.id}`)} class="mono">${w.id}</a></td>
                <td><${ChainName} chain=${w.chain} /></td><td class="num">${decimal(w.amount_usdc)}${w.token && w.token !== 'usdc' ? html` <small>${w.token.toUpperCase()}</small>` : ''}</td>
                <td class="mono small">${w.to}</td><td><${Status} value=${w.status} /></td><td><${ApprovalCell} approval=${w.approval} /></td><td>${ago(w.created_at)}</td></tr>`,
            )}
          </tbody>
        </table>`}
    <${Toast} message=${toast} onDone=${() => setToast(null)} />
  </${Panel}>`;
}
