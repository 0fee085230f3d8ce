// Webhook events (GET /admin/webhook-events) by delivery status, newest first, with every delivery attempt of an
// event on demand (GET /admin/webhook-events/:id) and redelivery of failed or stored ones (POST .../redeliver).
import { html } from '../html.js';
import { useState } from 'preact/hooks';
import { api, post, query } from '../api.js';
import { ConfirmDialog, Empty, ErrorNote, Panel, Status, Toast, useResource } from '../components.js';
import { ago, dateTime } from '../format.js';
import { href } from '../router.js';
import { useCan } from '../session.js';
import { useStatuses } from '../statuses.js';

/** The tab shown first and by default, as GET /admin/webhook-events answers without a status. */
const DEFAULT_STATUS = 'failed';
const PAGE = 50;

export function Redeliver({ event, onDone }) {
  const [open, setOpen] = useState(false);
  if (!useCan('operate')) return null;
  return html`<span onClick=${(e) => e.stopPropagation()}>
    <button type="button" class="button small" data-action="redeliver" onClick=${(e) => { e.preventDefault(); setOpen(true); }}>Redeliver</button>
    ${open
      ? html`<${ConfirmDialog}
          title="Deliver this event again?"
          description=${html`<p><code>${event.id}</code> (${event.event_type})</p><p>Puts the event back in the queue with a fresh retry budget: up to six more POSTs to the merchant’s current webhook_url, same webhook-id, so receivers can deduplicate.</p>`}
          confirmLabel="Redeliver"
          onConfirm=${async () => onDone?.(await post(`/admin/webhook-events/${encodeURIComponent(event.id)}/redeliver`))}
          onClose=${() => setOpen(false)}
        />`
      : null}
  </span>`;
}

function Deliveries({ id }) {
  const event = useResource(() => api(`/admin/webhook-events/${encodeURIComponent(id)}`), id);
  if (!event.data) return html`<tr class="deliveries"><td colspan="7">${event.error ? html`<${ErrorNote} error=${event.error} />` : 'Loading…'}</td></tr>`;
  const e = event.data;
  return html`<tr class="deliveries"><td colspan="7">
    ${e.deliveries.length
      ? html`<table class="table small">
          <thead><tr><th>#</th><th>URL</th><th>Answer</th><th class="num">Latency</th><th>When</th></tr></thead>
          <tbody>${e.deliveries.map((d) => html`<tr><td>${d.attempt}</td><td class="mono">${d.url}</td><td>${d.status_code ?? html`<span class="bad">${d.error}</span>`}</td><td class="num">${d.latency_ms} ms</td><td>${dateTime(d.created_at)}</td></tr>`)}</tbody>
        </table>`
      : html`<p class="muted small">No delivery attempt.</p>`}
    <pre class="payload">${JSON.stringify(e.payload, null, 2)}</pre>
  </td></tr>`;
}

export function WebhooksPage({ params }) {
  const tabs = [DEFAULT_STATUS, ...useStatuses().webhook_event_statuses.filter((s) => s !== DEFAULT_STATUS), 'all'];
  const status = tabs.includes(params.status) ? params.status : DEFAULT_STATUS;
  const [pages, setPages] = useState([]);
  const [open, setOpen] = useState(null);
  const [toast, setToast] = useState(null);
  const before = pages.at(-1);
  const events = useResource(() => api(`/admin/webhook-events${query({ status, limit: PAGE, before })}`), `${status}:${before ?? ''}`);
  const rows = events.data ?? [];
  const redelivered = (result) => {
    setToast(`${result.id} queued again`);
    events.reload();
  };
  return html`<div class="page">
    <nav class="tabs">
      ${tabs.map((s) => html`<a class=${s === status ? 'tab active' : 'tab'} href=${href('/webhooks', { status: s })} onClick=${() => setPages([])}>${s}</a>`)}
    </nav>
    <${Panel}
      title=${`Webhook events: ${status}`}
      actions=${html`${before ? html`<button class="button" onClick=${() => setPages(pages.slice(0, -1))}>← Newer</button>` : null}
        <button class="button" disabled=${rows.length < PAGE} onClick=${() => setPages([...pages, rows.at(-1).id])}>Older →</button>
        <button class="button" onClick=${() => events.reload()}>Refresh</button>`}
    >
      <${ErrorNote} error=${events.error} />
      ${events.data && rows.length === 0 ? html`<${Empty}>No ${status === 'all' ? '' : status} webhook events.</${Empty}>` : null}
      ${rows.length
        ? html`<table class="table" data-testid="webhook-events">
            <thead><tr><th>Event</th><th>Type</th><th>Payment</th><th>Status</th><th class="num">Attempts</th><th>Last error</th><th>Created</th></tr></thead>
            <tbody>
              ${rows.map(
                (e) => html`<tr key=${e.id} class="clickable" onClick=${() => setOpen(open === e.id ? null : e.id)}>
                    <td class="mono small">${e.id}</td>
                    <td class="mono">${e.event_type}</td>
                    <td>${e.payment_intent_id ? html`<a class="mono small" href=${href(`/payments/${e.payment_intent_id}`)} onClick=${(ev) => ev.stopPropagation()}>${e.payment_intent_id}</a>` : '—'}</td>
                    <td><${Status} value=${e.status} /> ${e.status === 'failed' || e.status === 'stored' ? html`<${Redeliver} event=${e} onDone=${redelivered} />` : null}</td>
                    <td class="num">${e.attempts}</td>
                    <td class="small">${e.last_error ?? ''}</td>
                    <td title=${dateTime(e.created_at)}>${ago(e.created_at)}</td>
                  </tr>
                  ${open === e.id ? html`<${Deliveries} id=${e.id} />` : null}`,
              )}
            </tbody>
          </table>`
        : null}
    </${Panel}>
    <${Toast} message=${toast} onDone=${() => setToast(null)} />
  </div>`;
}
