// The operator console: one page over the /admin JSON endpoints (decision 120). Views: payments (list, one payment),
// the manual-review queue, treasury, chain health, webhooks. A header shows counts by status and whether the live
// stream is connected.
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, onAuthRequired, setAdminToken } from './api.js';
import { useResource } from './components.js';
import { html } from './html.js';
import { startLive, useLiveEvents, useLiveState, useThrottled } from './live.js';
import { HealthPage } from './pages/health.js';
import { PaymentPage } from './pages/payment.js';
import { PaymentsPage } from './pages/payments.js';
import { ReviewPage } from './pages/review.js';
import { TreasuryPage } from './pages/treasury.js';
import { WebhooksPage } from './pages/webhooks.js';
import { href, useRoute } from './router.js';

const NAV = [
  ['payments', 'Payments'],
  ['review', 'Manual review'],
  ['treasury', 'Treasury'],
  ['health', 'Chain health'],
  ['webhooks', 'Webhooks'],
];

function Counts() {
  const counts = useResource(() => api('/admin/payment-counts'), 'counts');
  const refresh = useThrottled(() => counts.reload(), 2000);
  useLiveEvents(() => refresh());
  const by = counts.data?.by_status ?? {};
  const open = ['route_selected', 'broadcasting', 'broadcasted', 'pending_confirmation', 'retrying'].reduce((sum, s) => sum + (by[s] ?? 0), 0);
  const item = (name, value, status, tone) =>
    html`<a class=${`count ${tone}`} href=${href('/payments', status ? { status } : {})}><strong>${value.toLocaleString('en-US')}</strong> ${name}</a>`;
  return html`<div class="counts" data-testid="counts">
    ${item('payments', counts.data?.total ?? 0, null, '')}
    ${item('in progress', open, null, 'progress')}
    ${item('settled', by.settled ?? 0, 'settled', 'good')}
    ${item('manual review', by.manual_review ?? 0, 'manual_review', by.manual_review ? 'alert' : '')}
    ${item('failed', by.failed ?? 0, 'failed', by.failed ? 'bad' : '')}
  </div>`;
}

function LiveDot() {
  const state = useLiveState();
  return html`<span class=${`live ${state}`} data-testid="live" data-state=${state} title="Server-sent events from /admin/events">${state === 'live' ? 'Live' : state === 'connecting' ? 'Connecting…' : 'Reconnecting…'}</span>`;
}

function TokenPrompt() {
  const [needed, setNeeded] = useState(false);
  const [value, setValue] = useState('');
  useEffect(() => onAuthRequired(setNeeded), []);
  if (!needed) return null;
  return html`<form class="token" onSubmit=${(e) => { e.preventDefault(); setAdminToken(value.trim()); location.reload(); }}>
    <span>This admin listener asks for a token.</span>
    <input type="password" autocomplete="off" placeholder="Admin token" value=${value} onInput=${(e) => setValue(e.currentTarget.value)} aria-label="Admin token" />
    <button class="button primary" type="submit">Use token</button>
    <span class="muted small">Kept in this tab only (sessionStorage).</span>
  </form>`;
}

function View({ route }) {
  const [section, id] = route.segments;
  if (section === 'payments' && id) return html`<${PaymentPage} id=${id} key=${id} />`;
  if (section === 'review') return html`<${ReviewPage} />`;
  if (section === 'treasury') return html`<${TreasuryPage} />`;
  if (section === 'health') return html`<${HealthPage} />`;
  if (section === 'webhooks') return html`<${WebhooksPage} params=${route.params} key=${route.params.status ?? ''} />`;
  return html`<${PaymentsPage} params=${route.params} key=${JSON.stringify(route.params)} />`;
}

function App() {
  const route = useRoute();
  const section = route.segments[0] ?? 'payments';
  useEffect(() => startLive(), []);
  return html`<div class="shell">
    <header class="top">
      <a class="brand" href="#/payments"><img src="/console/favicon.svg" alt="" width="22" height="22" /> stableroute</a>
      <nav>${NAV.map(([key, name]) => html`<a class=${section === key ? 'active' : ''} href=${href(`/${key}`)}>${name}</a>`)}</nav>
      <${LiveDot} />
    </header>
    <${TokenPrompt} />
    <${Counts} />
    <main><${View} route=${route} /></main>
    <footer class="foot muted small">JSON behind every view: <a href="/openapi.json">/openapi.json</a> (admin tag) · Prometheus: <a href="/metrics">/metrics</a></footer>
  </div>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
