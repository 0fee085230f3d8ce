// The audit log (GET /admin/audit, decision 102): every operator action and every refusal of a known operator, newest
// first, by name. Filters (actor, action, target id) live in the URL; a click on an actor, an action or a target
// filters by it. Pages follow next_cursor. Refusals (outcome `refused:<CODE>`) stand out.
import { html } from '../html.js';
import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { Empty, ErrorNote, Panel, useResource } from '../components.js';
import { clock, dateTime } from '../format.js';
import { href, navigate } from '../router.js';
import { actorName, useSession, Who } from '../session.js';

const PAGE_SIZE = 50;
const FILTERS = ['actor', 'action', 'target'];

/** An operator's name typed in the actor filter means that operator's id; anything else is taken as an id. */
function actorIdOf(names, text) {
  const wanted = text.trim();
  const lower = wanted.toLowerCase();
  for (const [id, o] of names) if (o.name.toLowerCase() === lower) return id;
  return wanted;
}

function Filters({ params }) {
  const { names } = useSession();
  const [values, setValues] = useState({ actor: params.actor ? actorName(names, params.actor) : '', action: params.action ?? '', target: params.target ?? '' });
  const submit = (event) => {
    event.preventDefault();
    navigate('/audit', { actor: values.actor ? actorIdOf(names, values.actor) : '', action: values.action.trim(), target: values.target.trim() });
  };
  const input = (name, placeholder, list) =>
    html`<input name=${name} placeholder=${placeholder} aria-label=${name} list=${list} value=${values[name]} onInput=${(e) => setValues({ ...values, [name]: e.currentTarget.value })} />`;
  return html`<form class="filters" data-testid="audit-filters" onSubmit=${submit}>
    ${input('actor', 'Who (a name or an id)', 'audit-actors')}
    <datalist id="audit-actors">${[...names.values()].map((o) => html`<option value=${o.name}>${o.role}</option>`)}</datalist>
    ${input('action', 'Action (withdrawal.create)')}
    ${input('target', 'Target (pi_…, op_…, mer_…)')}
    <button class="button primary" type="submit">Filter</button>
    ${FILTERS.some((f) => params[f]) ? html`<a class="button" href="#/audit">Clear</a>` : null}
  </form>`;
}

function Outcome({ value }) {
  const refused = value.startsWith('refused:');
  return html`<span class=${`badge ${refused ? 'tone-bad' : 'tone-good'}`} data-outcome=${value}>${refused ? `refused: ${value.slice(8)}` : value}</span>`;
}

/** The request's fields, one per line (they never hold a secret: those are redacted when recorded). */
function Details({ details }) {
  const entries = Object.entries(details ?? {});
  if (entries.length === 0) return html`<span class="muted">—</span>`;
  return html`<dl class="details">${entries.map(([k, v]) => html`<dt>${k}</dt><dd>${typeof v === 'string' ? v : JSON.stringify(v)}</dd>`)}</dl>`;
}

function Target({ id, params }) {
  if (id.startsWith('pi_')) return html`<a class="mono small" href=${href(`/payments/${id}`)}>${id}</a>`;
  return html`<a class="mono small" href=${href('/audit', { ...params, target: id })}>${id}</a>`;
}

export function AuditPage({ params }) {
  const { names, reloadNames } = useSession();
  const [cursors, setCursors] = useState([]);
  const cursor = cursors.at(-1);
  const filter = { actor: params.actor, action: params.action, target: params.target };
  const page = useResource(() => api(`/admin/audit${query({ ...filter, limit: PAGE_SIZE, cursor })}`), `${JSON.stringify(filter)}:${cursor ?? ''}`);
  const rows = page.data?.data ?? [];
  // An operator created since sign-in: ask for the names again, once per page that shows one.
  useEffect(() => {
    if (rows.some((r) => r.actor.startsWith('op_') && !names.has(r.actor))) reloadNames();
  }, [page.data]);
  return html`<div class="page">
    <${Filters} params=${params} />
    <${Panel}
      title=${cursor ? `Audit log (page ${cursors.length + 1})` : 'Audit log (newest first)'}
      actions=${html`${cursor ? html`<button class="button" onClick=${() => setCursors(cursors.slice(0, -1))}>← Newer</button>` : null}
        <button class="button" disabled=${!page.data?.next_cursor} onClick=${() => setCursors([...cursors, page.data.next_cursor])}>Older →</button>
        <button class="button" onClick=${() => page.reload()} disabled=${page.loading}>Refresh</button>`}
    >
      <${ErrorNote} error=${page.error} />
      ${page.data && rows.length === 0 ? html`<${Empty}>No record matches.</${Empty}>` : null}
      ${rows.length
        ? html`<table class="table audit" data-testid="audit">
            <thead><tr><th class="num">#</th><th>When</th><th>Who</th><th>Action</th><th>Targets</th><th>Details</th><th>From</th><th>Outcome</th></tr></thead>
            <tbody>
              ${rows.map(
                (r) => html`<tr key=${r.seq} data-seq=${r.seq} data-action=${r.action} data-actor=${r.actor} class=${r.outcome.startsWith('refused:') ? 'refused' : ''}>
                  <td class="num muted small" title=${`hash ${r.hash}\nprevious ${r.prev_hash}`}>${r.seq}</td>
                  <td title=${dateTime(r.at)}>${clock(r.at)}<div class="muted small">${r.at.slice(0, 10)}</div></td>
                  <td><a href=${href('/audit', { ...params, actor: r.actor })}><${Who} id=${r.actor} /></a>${r.actor_role ? html`<div class="muted small">${r.actor_role}</div>` : null}</td>
                  <td><a class="mono" href=${href('/audit', { ...params, action: r.action })}>${r.action}</a></td>
                  <td>${r.targets.length ? r.targets.map((t) => html`<div><${Target} id=${t} params=${params} /></div>`) : html`<span class="muted">—</span>`}</td>
                  <td><${Details} details=${r.details} /></td>
                  <td class="mono small">${r.peer ?? html`<span class="muted">CLI</span>`}</td>
                  <td><${Outcome} value=${r.outcome} /></td>
                </tr>`,
              )}
            </tbody>
          </table>`
        : null}
      ${!page.data && page.loading ? html`<${Empty}>Loading…</${Empty}>` : null}
    </${Panel}>
    <p class="muted small">Each record holds the hash of the one before it: <code>stableroute audit verify</code> proves none was altered, removed or reordered.</p>
  </div>`;
}
