// One payment (GET /admin/payments/:id): its status timeline, attempts with their transaction ids, every ledger
// posting, the webhook events with each delivery attempt, the operator's actions for its status, and, for a payment or
// withdrawal that waited for approval, who requested, approved and decided it. Refetched whenever the live stream
// reports a change to it.
import { html } from '../html.js';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { PaymentActions } from '../actions.js';
import { chainLabel, ChainName } from '../chains.js';
import { Empty, ErrorNote, Hash, Panel, Status, Toast, useResource } from '../components.js';
import { clock, dateTime, decimal, duration, label, usd } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { href } from '../router.js';
import { Who } from '../session.js';
import { ApprovalActions, ApprovalCount, approvalOutcomeText, RequestedBy } from './approvals.js';
import { Redeliver } from './webhooks.js';

function Timeline({ steps }) {
  return html`<ol class="timeline" data-testid="timeline">
    ${steps.map(
      (s, i) => html`<li>
        <${Status} value=${s.to} />
        <span class="when" title=${dateTime(s.at)}>${clock(s.at)}</span>
        ${i > 0 ? html`<span class="muted">${duration(steps[i - 1].at, s.at)}</span>` : null}
        ${s.reason ? html`<span class="reason">${s.reason}</span>` : null}
      </li>`,
    )}
  </ol>`;
}

function Attempts({ attempts }) {
  if (attempts.length === 0) return html`<${Empty}>Nothing signed yet.</${Empty}>`;
  return html`<table class="table">
    <thead><tr><th>Transaction</th><th>Status</th><th class="num">Fee</th><th>Broadcast</th><th>Included</th><th>Confirmed</th><th>Failure</th></tr></thead>
    <tbody>
      ${attempts.map(
        (a) => html`<tr key=${a.id}>
          <td><${Hash} value=${a.tx_id} keep=${10} />${a.chain_meta?.nonce !== undefined ? html`<span class="muted small"> nonce ${a.chain_meta.nonce}</span>` : null}${a.purpose === 'cancel' ? html`<span class="muted small"> cancel on chain</span>` : null}</td>
          <td><${Status} value=${a.status} /></td>
          <td class="num">${a.actual_fee_native !== null ? `${decimal(a.actual_fee_native)} ${a.fee_currency}` : html`<span class="muted">est. ${usd(a.estimated_fee_usd)}</span>`}</td>
          <td title=${dateTime(a.broadcast_at)}>${clock(a.broadcast_at)}</td>
          <td title=${dateTime(a.included_at)}>${clock(a.included_at)}</td>
          <td title=${dateTime(a.confirmed_at)}>${clock(a.confirmed_at)}</td>
          <td>${a.failure_reason ? html`<span title=${a.failure_detail ?? ''}>${label(a.failure_reason)}</span>` : ''}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function Ledger({ transactions }) {
  if (transactions.length === 0) return html`<${Empty}>No ledger postings.</${Empty}>`;
  return html`<table class="table ledger">
    <thead><tr><th>Transaction</th><th>Account</th><th class="num">Amount</th><th>When</th></tr></thead>
    <tbody>
      ${transactions.flatMap((t) =>
        t.postings.map(
          (p, i) => html`<tr class=${i === 0 ? 'group-start' : ''}>
            <td>${i === 0 ? html`<strong>${t.type}</strong> <span class="muted small">#${t.id} · ${chainLabel(t.chain)}</span>` : ''}</td>
            <td class="mono small">${p.account}</td>
            <td class=${`num ${p.amount.startsWith('-') ? 'debit' : 'credit'}`}>${decimal(p.amount)} ${p.currency}</td>
            <td>${i === 0 ? dateTime(t.created_at) : ''}</td>
          </tr>`,
        ),
      )}
    </tbody>
  </table>`;
}

export function WebhookEvents({ events, onChange }) {
  if (events.length === 0) return html`<${Empty}>No webhook events.</${Empty}>`;
  return html`<div class="events">
    ${events.map(
      (e) => html`<details class="event" key=${e.id}>
        <summary>
          <span class="mono">${e.event_type}</span> <${Status} value=${e.status} />
          <span class="muted small">${e.attempts} attempt${e.attempts === 1 ? '' : 's'} · ${dateTime(e.created_at)}</span>
          ${e.status === 'failed' || e.status === 'stored' ? html`<${Redeliver} event=${e} onDone=${onChange} />` : null}
        </summary>
        ${e.deliveries.length
          ? html`<table class="table small">
              <thead><tr><th>#</th><th>URL</th><th>Answer</th><th class="num">Latency</th><th>When</th></tr></thead>
              <tbody>
                ${e.deliveries.map(
                  (d) => html`<tr><td>${d.attempt}</td><td class="mono">${d.url}</td><td>${d.status_code ?? html`<span class="bad">${d.error}</span>`}</td><td class="num">${d.latency_ms} ms</td><td>${dateTime(d.created_at)}</td></tr>`,
                )}
              </tbody>
            </table>`
          : html`<p class="muted small">${e.status === 'stored' ? 'Stored, not sent: the merchant has no webhook_url.' : 'Not attempted yet.'}</p>`}
        <pre class="payload">${JSON.stringify(e.payload, null, 2)}</pre>
      </details>`,
    )}
  </div>`;
}

/** Who asked, who approved, who decided, and what is still needed (decision 103). */
function Approval({ payment, onDone }) {
  const a = payment.approval;
  const when = (at) => (at ? html` <span class="muted small" title=${dateTime(at)}>${clock(at)}</span>` : null);
  return html`<${Panel} title="Approval" id="approval">
    <dl class="facts approval" data-testid="approval" data-status=${a.status}>
      <dt>Status</dt><dd><${Status} value=${a.status} /> <${ApprovalCount} given=${a.approvals} required=${a.approvals_required} /></dd>
      <dt>Requested by</dt><dd data-testid="requested-by"><${RequestedBy} approval=${a} />${when(a.requested_at)}</dd>
      ${a.first_approved_by ? html`<dt>First approval</dt><dd data-testid="first-approved-by"><${Who} id=${a.first_approved_by} />${when(a.first_approved_at)}</dd>` : null}
      ${a.decided_by || a.decided_at ? html`<dt>${a.status === 'rejected' ? 'Rejected by' : a.status === 'approved' ? 'Approved by' : 'Decided by'}</dt><dd data-testid="decided-by"><${Who} id=${a.decided_by} />${when(a.decided_at)}</dd>` : null}
      ${a.reason ? html`<dt>Reason</dt><dd>${a.reason}</dd>` : null}
    </dl>
    ${a.status === 'pending'
      ? html`<${ApprovalActions}
          id=${payment.id}
          approval=${a}
          summary=${html`<p><code>${payment.id}</code> · ${usd(payment.amount_usd)}${payment.token ? ` ${payment.token.toUpperCase()}` : ''} on ${chainLabel(payment.selected_chain)} to <code>${payment.destination_address}</code></p>`}
          onDone=${onDone}
        />`
      : null}
  </${Panel}>`;
}

export function PaymentPage({ id }) {
  const [toast, setToast] = useState(null);
  const payment = useResource(() => api(`/admin/payments/${encodeURIComponent(id)}`), id);
  const refresh = useThrottled(() => payment.reload(), 500);
  useLiveEvents((type, data) => {
    if (type === 'ready' || (type === 'payment' && data.id === id)) refresh();
  });
  const p = payment.data;
  if (!p) return html`<div class="page"><${ErrorNote} error=${payment.error} />${payment.loading ? html`<${Empty}>Loading…</${Empty}>` : null}</div>`;
  const done = (result) => {
    setToast(`${result.payment_intent_id} is now ${label(result.status)}`);
    payment.reload();
  };
  return html`<div class="page">
    <p class="crumbs"><a href=${href('/payments')}>Payments</a> / <span class="mono">${p.id}</span></p>
    <section class="summary panel" data-testid="payment-summary">
      <div class="summary-main">
        <h1><span class="amount">${usd(p.amount_usd)}</span>${p.token ? html` <small>${p.token.toUpperCase()}</small>` : ''} <${Status} value=${p.status} /></h1>
        <dl class="facts">
          <dt>Payment</dt><dd class="mono">${p.id}</dd>
          <dt>Chain</dt><dd><${ChainName} chain=${p.selected_chain} /></dd>
          <dt>Destination</dt><dd><${Hash} value=${p.destination_address} keep=${12} /></dd>
          <dt>Merchant</dt><dd class="mono">${p.merchant_id}</dd>
          <dt>Idempotency key</dt><dd class="mono">${p.idempotency_key}</dd>
          <dt>Quote</dt><dd class="mono">${p.quote_id}</dd>
          <dt>Created</dt><dd>${dateTime(p.created_at)}</dd>
          <dt>Updated</dt><dd>${dateTime(p.updated_at)}</dd>
        </dl>
      </div>
      <div class="summary-actions">
        <h2>Operator actions</h2>
        <${PaymentActions} payment=${p} onDone=${done} />
      </div>
    </section>
    <${ErrorNote} error=${payment.error} />
    ${p.approval
      ? html`<${Approval}
          payment=${p}
          onDone=${(result) => {
            setToast(approvalOutcomeText(result));
            payment.reload();
          }}
        />`
      : null}
    <div class="grid detail">
      <${Panel} title="Status timeline"><${Timeline} steps=${p.timeline} /></${Panel}>
      <${Panel} title="Attempts"><${Attempts} attempts=${p.attempts} /></${Panel}>
    </div>
    <${Panel} title="Ledger postings"><${Ledger} transactions=${p.ledger} /></${Panel}>
    <${Panel} title="Webhook events"><${WebhookEvents} events=${p.webhook_events} onChange=${() => payment.reload()} /></${Panel}>
    <${Toast} message=${toast} onDone=${() => setToast(null)} />
  </div>`;
}
