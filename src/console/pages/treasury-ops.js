// Running the treasury: open and past operator alerts (decision 120), continuous reconciliation's history (decision
// 119) and inbound transfers (decisions 122, 123, 125, 126); withdrawals are in withdrawals.js. Each panel reads its own admin endpoint, newest first, the latest page only.
import { html } from '../html.js';
import { api } from '../api.js';
import { ChainName } from '../chains.js';
import { useEffect, useState } from 'preact/hooks';
import { Empty, ErrorNote, Hash, Panel, Status, useResource } from '../components.js';
import { ago, dateTime, decimal } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { href } from '../router.js';

const PAGE = 20;

/** GET /admin/alerts: low gas and reconciliation mismatches, open and resolved, newest first. */
export function Alerts() {
  const alerts = useResource(() => api(`/admin/alerts?limit=${PAGE}`), 'alerts');
  const rows = alerts.data?.data ?? [];
  return html`<${Panel} title="Operator alerts" actions=${html`<button class="button" onClick=${() => alerts.reload()} disabled=${alerts.loading}>Refresh</button>`}>
    <${ErrorNote} error=${alerts.error} />
    ${rows.length === 0
      ? html`<${Empty}>${alerts.loading ? 'Loading…' : 'No alerts: gas is above its low-water marks and the ledger agrees with the chains.'}</${Empty}>`
      : html`<table class="table" data-testid="alerts">
          <thead><tr><th>Status</th><th>Kind</th><th>Chain</th><th>Message</th><th>First seen</th><th>Last seen</th><th>Resolved</th></tr></thead>
          <tbody>
            ${rows.map(
              (a) => html`<tr key=${a.id} data-id=${a.id}><td><${Status} value=${a.status} /></td><td>${a.kind}</td>
                <td><${ChainName} chain=${a.chain} /></td><td class="small">${a.message}</td>
                <td>${ago(a.first_seen_at)}</td><td>${ago(a.last_seen_at)}</td><td>${a.resolved_at ? dateTime(a.resolved_at) : '—'}</td></tr>`,
            )}
          </tbody>
        </table>`}
  </${Panel}>`;
}

/** GET /admin/reconciliations: what the workers found each period. */
export function ReconciliationHistory() {
  const runs = useResource(() => api(`/admin/reconciliations?limit=${PAGE}`), 'reconciliations');
  const rows = runs.data?.data ?? [];
  return html`<${Panel} title="Reconciliation history (every RECONCILE_INTERVAL_SECONDS)" actions=${html`<button class="button" onClick=${() => runs.reload()} disabled=${runs.loading}>Refresh</button>`}>
    <${ErrorNote} error=${runs.error} />
    ${rows.length === 0
      ? html`<${Empty}>${runs.loading ? 'Loading…' : 'No run recorded yet: the workers reconcile shortly after they start.'}</${Empty}>`
      : html`<table class="table" data-testid="reconciliation-history">
          <thead><tr><th>When</th><th>Chain</th><th>Status</th><th class="num">Ledger USDC</th><th class="num">On chain USDC</th><th class="num">Difference</th><th></th></tr></thead>
          <tbody>
            ${rows.map(
              (r) => html`<tr key=${r.id}><td>${dateTime(r.created_at)}</td><td><${ChainName} chain=${r.chain} /></td><td><${Status} value=${r.status} /></td>
                <td class="num">${decimal(r.ledger_usdc)}</td><td class="num">${decimal(r.on_chain_usdc)}</td><td class="num">${decimal(r.difference_usdc)}</td><td class="small">${r.error ?? ''}</td></tr>`,
            )}
          </tbody>
        </table>`}
  </${Panel}>`;
}

const DEPOSIT_REFRESH_MS = 3000;
const DEPOSIT_FILTERS = [
  ['all', 'All'],
  ['unmatched', 'Waiting for an operator'],
];

/**
 * GET /admin/deposits: transfers into the treasuries the deposit scanner booked (decision 122), as funding or as a
 * payment's refund; `unmatched` lists USDC from a past payout's recipient that waits for `stableroute intents refund`.
 */
export function Deposits() {
  const [filter, setFilter] = useState('all');
  const list = useResource(() => api(`/admin/deposits?limit=${PAGE}${filter === 'all' ? '' : `&status=${filter}`}`), `deposits-${filter}`);
  const refresh = useThrottled(() => list.reload(), 2000);
  useLiveEvents(() => refresh());
  // Deposits come from outside, not through the payments' live stream: the panel also asks again every few seconds.
  useEffect(() => {
    const timer = setInterval(() => list.reload(), DEPOSIT_REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
  const rows = list.data?.data ?? [];
  const tabs = html`<div class="tabs" role="group" aria-label="Deposits shown">
    ${DEPOSIT_FILTERS.map(
      ([key, name]) => html`<button type="button" class=${`button ${filter === key ? 'primary' : ''}`} aria-pressed=${filter === key} onClick=${() => setFilter(key)}>${name}</button>`,
    )}
  </div>`;
  return html`<${Panel} title="Deposits and returns (inbound transfers)" actions=${tabs}>
    <${ErrorNote} error=${list.error} />
    ${rows.length === 0
      ? html`<${Empty}>${list.loading ? 'Loading…' : filter === 'all' ? 'No inbound transfer booked yet: USDC or gas sent to a treasury shows here within seconds.' : 'Nothing waits for an operator.'}</${Empty}>`
      : html`<table class="table" data-testid="deposits">
          <thead><tr><th>Booked</th><th>Chain</th><th class="num">Amount</th><th>From</th><th>Transaction</th><th>Status</th><th>Booked as</th></tr></thead>
          <tbody>
            ${rows.map(
              (d) => html`<tr key=${d.id} data-id=${d.id} data-tx=${d.tx_id}><td>${ago(d.booked_at)}</td><td><${ChainName} chain=${d.chain} /></td>
                <td class="num">${decimal(d.amount)} <small>${d.currency}</small></td><td><${Hash} value=${d.from_address} keep=${8} /></td>
                <td><${Hash} value=${d.tx_id} keep=${8} /></td><td><${Status} value=${d.status} /></td>
                <td>${d.booked_as === 'refund' && d.payment_intent_id ? html`refund of <a class="mono" href=${href(`/payments/${d.payment_intent_id}`)}>${d.payment_intent_id}</a>` : d.booked_as}</td></tr>`,
            )}
          </tbody>
        </table>`}
  </${Panel}>`;
}
