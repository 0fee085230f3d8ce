// The manual-review queue: payments a worker set aside (stuck, or an execution abandoned after every retry), oldest
// concern first on top, each with the operator's actions; and payments between execution attempts, which may be
// cancelled while nothing of theirs can land. Both lists follow the live stream.
import { html } from '../html.js';
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { PaymentActions } from '../actions.js';
import { Empty, ErrorNote, Panel, Toast, useResource } from '../components.js';
import { label } from '../format.js';
import { useLiveEvents, useThrottled } from '../live.js';
import { useCan } from '../session.js';
import { PaymentRows } from './payments.js';

const WATCHED = new Set(['manual_review', 'retrying']);

function Queue({ status, title, empty, setToast, testId }) {
  const [cursors, setCursors] = useState([]);
  const cursor = cursors.at(-1);
  const list = useResource(() => api(`/admin/payments${query({ status, limit: 50, cursor })}`), `${status}:${cursor ?? ''}`);
  const refresh = useThrottled(() => list.reload(), 1000);
  useLiveEvents((type, data) => {
    if (type === 'ready' || (type === 'payment' && (WATCHED.has(data.status) || WATCHED.has(data.from)))) refresh();
  });
  const done = (result) => {
    setToast(`${result.payment_intent_id} is now ${label(result.status)}`);
    list.reload();
  };
  const rows = list.data?.data ?? [];
  const canOperate = useCan('operate');
  return html`<${Panel}
    title=${title}
    id=${testId}
    actions=${html`${cursor ? html`<button class="button" onClick=${() => setCursors(cursors.slice(0, -1))}>← Newer</button>` : null}
      <button class="button" disabled=${!list.data?.next_cursor} onClick=${() => setCursors([...cursors, list.data.next_cursor])}>Older →</button>`}
  >
    <${ErrorNote} error=${list.error} />
    ${list.data && rows.length === 0 ? html`<${Empty}>${empty}</${Empty}>` : null}
    ${rows.length ? html`<${PaymentRows} rows=${rows} actions=${canOperate ? (p) => html`<${PaymentActions} payment=${p} onDone=${done} compact=${true} />` : undefined} />` : null}
  </${Panel}>`;
}

export function ReviewPage() {
  const [toast, setToast] = useState(null);
  return html`<div class="page">
    <${Queue} status="manual_review" title="Manual review" testId="manual-review" empty="Nothing waits for an operator." setToast=${setToast} />
    <${Queue} status="retrying" title="Between execution attempts (cancellable)" testId="retrying" empty="No payment is between attempts." setToast=${setToast} />
    <${Toast} message=${toast} onDone=${() => setToast(null)} />
  </div>`;
}
