// Treasury per chain. Each panel reads one admin endpoint, so a new data source is one more entry in PANELS
// (operator alerts, reconciliation history and deposits are in treasury-ops.js, withdrawals in withdrawals.js).
import { html } from '../html.js';
import { api } from '../api.js';
import { ChainName } from '../chains.js';
import { Empty, ErrorNote, Hash, Panel, Status, useResource } from '../components.js';
import { ago, dateTime, decimal } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { Alerts, Deposits, ReconciliationHistory } from './treasury-ops.js';
import { Withdrawals } from './withdrawals.js';

/** GET /admin/treasury: the ledger's view, cheap, refreshed live as payments move funds. */
function Balances() {
  const treasury = useResource(() => api('/admin/treasury'), 'treasury');
  const refresh = useThrottled(() => treasury.reload(), 2000);
  useLiveEvents(() => refresh());
  return html`<${Panel} title="Treasury balances (ledger)">
    <${ErrorNote} error=${treasury.error} />
    <div class="cards" data-testid="treasury">
      ${(treasury.data ?? []).map(
        (c) => html`<article class="card" key=${c.chain} data-chain=${c.chain}>
          <header><${ChainName} chain=${c.chain} /> <span class="muted small">${c.adapter}</span></header>
          <p class="address"><${Hash} value=${c.address} keep=${10} /></p>
          <dl class="balances">
            <dt>Available</dt><dd class="big">${decimal(c.available_usdc)} <small>USDC</small></dd>
            <dt>Reserved</dt><dd>${decimal(c.reserved_usdc)} <small>USDC</small></dd>
            <dt>In flight</dt><dd>${decimal(c.in_flight_usdc)} <small>USDC</small></dd>
            <dt>Gas</dt><dd data-gas-low=${c.gas_low ? 'true' : 'false'}>${decimal(c.native_balance)} <small>${c.native_currency}</small>${c.gas_low ? html` <span class="badge tone-warn">below ${decimal(c.gas_low_water)}</span>` : null}</dd>
            <dt>Unconfirmed</dt><dd>${c.unconfirmed_transfers} transfer${c.unconfirmed_transfers === 1 ? '' : 's'}${c.oldest_unconfirmed_at ? html` <span class="muted small">oldest ${ago(c.oldest_unconfirmed_at)}</span>` : null}</dd>
          </dl>
        </article>`,
      )}
    </div>
  </${Panel}>`;
}

/** GET /admin/reconciliation: asks each chain, so it is read on demand rather than on every payment. */
function Reconciliation() {
  const report = useResource(() => api('/admin/reconciliation'), 'reconciliation');
  return html`<${Panel} title="Reconciliation (ledger against chain)" actions=${html`<button class="button" onClick=${() => report.reload()} disabled=${report.loading}>${report.loading ? 'Asking the chains…' : 'Check now'}</button>`}>
    <${ErrorNote} error=${report.error} />
    ${report.data
      ? html`<table class="table" data-testid="reconciliation">
          <thead><tr><th>Chain</th><th>Status</th><th class="num">Ledger USDC</th><th class="num">On chain USDC</th><th class="num">Difference</th><th class="num">In flight</th><th class="num">Landed</th><th></th></tr></thead>
          <tbody>
            ${report.data.map(
              (r) => html`<tr><td><${ChainName} chain=${r.chain} /></td><td><${Status} value=${r.status} /></td>
                <td class="num">${decimal(r.ledger_usdc)}</td><td class="num">${decimal(r.on_chain_usdc)}</td><td class="num">${decimal(r.difference_usdc)}</td><td class="num">${decimal(r.in_flight_usdc)}</td><td class="num">${decimal(r.landed_usdc)}</td><td class="small">${r.error ?? ''}</td></tr>`,
            )}
          </tbody>
        </table>
        <p class="muted small">Checked ${dateTime(new Date().toISOString())}. Landed: of what is in flight, what the chain has included but the ledger has not settled yet; only that explains a shortfall (asked only when there is one).</p>`
      : html`<${Empty}>Asking the chains…</${Empty}>`}
  </${Panel}>`;
}

export const PANELS = [Balances, Alerts, Reconciliation, ReconciliationHistory, Deposits, Withdrawals];

export function TreasuryPage() {
  return html`<div class="page">${PANELS.map((P) => html`<${P} />`)}</div>`;
}
