// Payments: keyset pages from the server (GET /admin/payments), filters and search kept in the URL. The first page
// follows the live stream: a new payment or a status change refetches it (at most once a second), and rows that
// appeared since the last look are highlighted. Older pages stay put and say when newer payments arrived.
import { html } from '../html.js';
import { useRef, useState } from 'preact/hooks';
import { api, download, query } from '../api.js';
import { ChainName, ChainOptions } from '../chains.js';
import { Empty, ErrorNote, Hash, Panel, Status, useResource } from '../components.js';
import { ago, dateTime, label, usd } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { href, navigate } from '../router.js';
import { useStatuses } from '../statuses.js';

const PAGE_SIZE = 50;

/** A date input's day as the instant it starts (UTC), and the next day's start for an inclusive "to". */
const dayStart = (day, plusDays = 0) => (day ? new Date(Date.parse(`${day}T00:00:00.000Z`) + plusDays * 86_400_000).toISOString() : undefined);

export function paymentsQuery(params, cursor) {
  return query({
    status: params.status,
    chain: params.chain,
    merchant_id: params.merchant,
    created_from: dayStart(params.from),
    created_before: dayStart(params.to, 1),
    q: params.q,
    limit: PAGE_SIZE,
    cursor,
  });
}

/** The export of what the page's filters show (the search aside: exports filter, they do not search). */
export function exportPath(kind, params) {
  return `/admin/exports/${kind}.csv${query({
    status: params.status,
    chain: params.chain,
    merchant_id: params.merchant,
    from: dayStart(params.from),
    to: dayStart(params.to, 1),
  })}`;
}

/** Download links for the payments and their ledger postings, with the filters the page shows. */
function Exports({ params }) {
  const [busy, setBusy] = useState(null);
  const [error, setError] = useState(null);
  const period = `${params.from ? `-from-${params.from}` : ''}${params.to ? `-to-${params.to}` : ''}`;
  const link = (kind, text) => {
    const path = exportPath(kind, params);
    const filename = `stableroute-${kind}${period}.csv`;
    const save = async (event) => {
      event.preventDefault();
      setBusy(kind);
      setError(null);
      try {
        await download(path, filename);
      } catch (failure) {
        setError(failure);
      } finally {
        setBusy(null);
      }
    };
    return html`<a class="button" href=${path} download=${filename} data-testid=${`export-${kind}`} onClick=${save}
      title="CSV of the payments matching the status, chain, merchant and dates shown (not the search)">${busy === kind ? 'Exporting…' : text}</a>`;
  };
  return html`${link('payments', 'Export payments CSV')}${link('ledger', 'Export ledger CSV')}${error ? html`<${ErrorNote} error=${error} />` : null}`;
}

function Filters({ params }) {
  const [q, setQ] = useState(params.q ?? '');
  const set = (change) => navigate('/payments', { ...params, ...change });
  const { payment_statuses: statuses } = useStatuses();
  return html`<form class="filters" onSubmit=${(e) => { e.preventDefault(); set({ q: q.trim() }); }}>
    <input type="search" name="q" placeholder="Payment id, tx id or destination address" value=${q} onInput=${(e) => setQ(e.currentTarget.value)} aria-label="Search" />
    <select name="status" aria-label="Status" value=${params.status ?? ''} onChange=${(e) => set({ status: e.currentTarget.value })}>
      <option value="">Any status</option>
      ${statuses.map((s) => html`<option value=${s}>${label(s)}</option>`)}
    </select>
    <select name="chain" aria-label="Chain" value=${params.chain ?? ''} onChange=${(e) => set({ chain: e.currentTarget.value })}>
      <option value="">Any chain</option>
      <${ChainOptions} />
    </select>
    <input name="merchant" placeholder="Merchant id" aria-label="Merchant" value=${params.merchant ?? ''} onChange=${(e) => set({ merchant: e.currentTarget.value.trim() })} />
    <label class="date">From <input type="date" name="from" value=${params.from ?? ''} onChange=${(e) => set({ from: e.currentTarget.value })} /></label>
    <label class="date">To <input type="date" name="to" value=${params.to ?? ''} onChange=${(e) => set({ to: e.currentTarget.value })} /></label>
    <button class="button primary" type="submit">Search</button>
    ${Object.values(params).some(Boolean) ? html`<a class="button" href="#/payments">Clear</a>` : null}
  </form>`;
}

export function PaymentRows({ rows, fresh = new Set(), actions }) {
  return html`<table class="table payments" data-testid="payments-table">
    <thead><tr><th>Payment</th><th>Status</th><th class="num">Amount</th><th>Chain</th><th>Destination</th><th>Last tx</th><th>Merchant</th><th>Created</th>${actions ? html`<th></th>` : null}</tr></thead>
    <tbody>
      ${rows.map(
        (p) => html`<tr key=${p.id} class=${fresh.has(p.id) ? 'fresh' : ''} data-id=${p.id}>
          <td><a href=${href(`/payments/${p.id}`)} class="mono">${p.id}</a></td>
          <td><${Status} value=${p.status} /></td>
          <td class="num">${usd(p.amount_usd)}${p.token ? html` <small>${p.token.toUpperCase()}</small>` : ''}</td>
          <td><${ChainName} chain=${p.selected_chain} /></td>
          <td><${Hash} value=${p.destination_address} keep=${6} /></td>
          <td><${Hash} value=${p.tx_id} keep=${6} /></td>
          <td class="mono small">${p.merchant_id}</td>
          <td title=${dateTime(p.created_at)}>${ago(p.created_at)}</td>
          ${actions ? html`<td>${actions(p)}</td>` : null}
        </tr>`,
      )}
    </tbody>
  </table>`;
}

export function PaymentsPage({ params }) {
  const [cursors, setCursors] = useState([]);
  const cursor = cursors.at(-1);
  const key = JSON.stringify(params) + (cursor ?? '');
  const known = useRef(null);
  const [fresh, setFresh] = useState(new Set());
  const [newer, setNewer] = useState(false);
  const page = useResource(async () => {
    const result = await api(`/admin/payments${paymentsQuery(params, cursor)}`);
    const ids = result.data.map((p) => p.id);
    // Highlight what appeared since the last load of this same view (not on the first load).
    setFresh(known.current ? new Set(ids.filter((id) => !known.current.has(id))) : new Set());
    known.current = new Set(ids);
    return result;
  }, key);
  const refresh = useThrottled(() => page.reload(), 1000);
  useLiveEvents((type) => {
    if (type !== 'payment' && type !== 'ready') return;
    if (cursor) setNewer(true);
    else refresh();
  });
  const first = () => {
    known.current = null;
    setNewer(false);
    setCursors([]);
  };
  const rows = page.data?.data ?? [];
  return html`<div class="page">
    <${Filters} params=${params} key=${JSON.stringify(params)} />
    <${Panel}
      title=${cursor ? `Payments (page ${cursors.length + 1})` : 'Payments'}
      actions=${html`<${Exports} params=${params} />
        ${newer ? html`<button class="button" onClick=${first}>Newer payments arrived: back to the newest</button>` : null}
        ${cursor ? html`<button class="button" onClick=${() => setCursors(cursors.slice(0, -1))}>← Newer</button>` : null}
        <button class="button" disabled=${!page.data?.next_cursor} onClick=${() => setCursors([...cursors, page.data.next_cursor])}>Older →</button>`}
    >
      <${ErrorNote} error=${page.error} />
      ${page.data && rows.length === 0 ? html`<${Empty}>No payment matches.</${Empty}>` : null}
      ${rows.length ? html`<${PaymentRows} rows=${rows} fresh=${fresh} />` : null}
      ${!page.data && page.loading ? html`<${Empty}>Loading…</${Empty}>` : null}
    </${Panel}>
  </div>`;
}
