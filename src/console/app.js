// The operator console: one page over the /admin JSON endpoints (decision 105). Views: payments (list, one payment),
// the manual-review queue, approvals, treasury, chain health, webhooks, the audit log. It starts at the sign-in page
// unless the tab's token (or, in development on loopback, no token) is accepted by GET /admin/me; the header shows who
// is signed in, counts by status and whether the live stream is connected.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { adminToken, api, onAuthRequired, setAdminToken } from './api.js';
import { loadChains } from './chains.js';
import { ErrorNote, useResource } from './components.js';
import { html } from './html.js';
import { startLive, stopLive, useLiveEvents, useLiveState, useThrottled } from './live.js';
import { ApprovalsPage } from './pages/approvals.js';
import { AuditPage } from './pages/audit.js';
import { HealthPage } from './pages/health.js';
import { PaymentPage } from './pages/payment.js';
import { PaymentsPage } from './pages/payments.js';
import { ReviewPage } from './pages/review.js';
import { SignInPage } from './pages/signin.js';
import { TreasuryPage } from './pages/treasury.js';
import { WebhooksPage } from './pages/webhooks.js';
import { href, useRoute } from './router.js';
import { SessionContext, useSession } from './session.js';
import { inProgress, loadStatuses, useStatuses } from './statuses.js';

const NAV = [
  ['payments', 'Payments'],
  ['review', 'Manual review'],
  ['approvals', 'Approvals'],
  ['treasury', 'Treasury'],
  ['health', 'Chain health'],
  ['webhooks', 'Webhooks'],
  ['audit', 'Audit'],
];

function Counts() {
  const counts = useResource(() => api('/admin/payment-counts'), 'counts');
  const refresh = useThrottled(() => counts.reload(), 2000);
  useLiveEvents(() => refresh());
  const statuses = useStatuses();
  const by = counts.data?.by_status ?? {};
  const open = inProgress(statuses).reduce((sum, s) => sum + (by[s] ?? 0), 0);
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

/** Who is signed in, and the way out: Sign out for a token, or signing in as an operator from `local` (development). */
function WhoAmI() {
  const { me, signOut } = useSession();
  const withToken = adminToken() !== null;
  return html`<div class="whoami" data-testid="whoami" title=${me.actor}>
    <span class="who-name">${me.name ?? me.actor}</span>
    <span class="role" data-role=${me.role}>${me.role}</span>
    <button type="button" class="button small dark" onClick=${signOut}>${withToken ? 'Sign out' : 'Sign in with a token'}</button>
  </div>`;
}

function View({ route }) {
  const [section, id] = route.segments;
  if (section === 'payments' && id) return html`<${PaymentPage} id=${id} key=${id} />`;
  if (section === 'review') return html`<${ReviewPage} />`;
  if (section === 'approvals') return html`<${ApprovalsPage} />`;
  if (section === 'audit') return html`<${AuditPage} params=${route.params} key=${JSON.stringify(route.params)} />`;
  if (section === 'treasury') return html`<${TreasuryPage} />`;
  if (section === 'health') return html`<${HealthPage} />`;
  if (section === 'webhooks') return html`<${WebhooksPage} params=${route.params} key=${route.params.status ?? ''} />`;
  return html`<${PaymentsPage} params=${route.params} key=${JSON.stringify(route.params)} />`;
}

function Shell() {
  const route = useRoute();
  const section = route.segments[0] ?? 'payments';
  useEffect(() => {
    startLive();
    return stopLive;
  }, []);
  return html`<div class="shell">
    <header class="top">
      <a class="brand" href="#/payments"><img src="/console/favicon.svg" alt="" width="22" height="22" /> stableroute</a>
      <nav>${NAV.map(([key, name]) => html`<a class=${section === key ? 'active' : ''} href=${href(`/${key}`)}>${name}</a>`)}</nav>
      <${LiveDot} />
      <${WhoAmI} />
    </header>
    <${Counts} />
    <main><${View} route=${route} /></main>
    <footer class="foot muted small">JSON behind every view: <a href="/openapi.json">/openapi.json</a> (admin tag) · Prometheus: <a href="/metrics">/metrics</a></footer>
  </div>`;
}

/** operator ids to {name, role, status}, for the names shown beside ids (audit log, approvals, withdrawals). */
async function loadNames() {
  try {
    return new Map((await api('/admin/operators')).map((o) => [o.operator_id, o]));
  } catch {
    return new Map();
  }
}

/**
 * checking: asking GET /admin/me with the tab's token (or none); signin: the service wants a (valid) token, or the
 * operator signed out; ready: signed in; error: the service could not be asked (down, or this Host refused).
 */
function App() {
  const [state, setState] = useState({ phase: 'checking' });
  const phase = useRef('checking');
  phase.current = state.phase;
  const enter = async (me, token) => {
    setAdminToken(token);
    const [names, chains, statuses] = await Promise.all([loadNames(), loadChains(), loadStatuses()]);
    setState({ phase: 'ready', me, names, chains, statuses });
  };
  useEffect(() => {
    api('/admin/me', { quiet: true }).then(
      (me) => enter(me, adminToken()),
      (error) => {
        if (error.status !== 401) return setState({ phase: 'error', error });
        const had = adminToken() !== null;
        setAdminToken(null);
        return setState({ phase: 'signin', notice: had ? 'ended' : null });
      },
    );
    // A request refused for its token while signed in ends the session (rotated token, disabled operator); one still
    // under way from before a sign-out, sent with the old token, does not.
    return onAuthRequired((sent) => {
      if (phase.current !== 'ready' || sent !== adminToken()) return;
      setAdminToken(null);
      setState({ phase: 'signin', notice: 'ended' });
    });
  }, []);
  const signOut = () => {
    const had = adminToken() !== null;
    setAdminToken(null);
    setState({ phase: 'signin', notice: had ? 'signed-out' : null });
  };
  const reloadNames = async () => {
    const names = await loadNames();
    setState((s) => (s.phase === 'ready' ? { ...s, names } : s));
  };
  if (state.phase === 'checking') return html`<p class="booting">Loading the console…</p>`;
  if (state.phase === 'error') return html`<div class="signin-page"><${ErrorNote} error=${state.error} /></div>`;
  if (state.phase === 'signin') return html`<${SignInPage} notice=${state.notice} onSignedIn=${enter} />`;
  const session = { me: state.me, names: state.names, chains: state.chains, statuses: state.statuses, signOut, reloadNames };
  return html`<${SessionContext.Provider} value=${session}><${Shell} /></${SessionContext.Provider}>`;
}

const root = document.getElementById('app');
root.textContent = '';
render(html`<${App} />`, root);
