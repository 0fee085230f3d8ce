// Shared pieces of the console's views.
import { html } from './html.js';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { label, shortHash, STATUS_TONE } from './format.js';

/** Loads `load()` when `key` changes; keeps the last data while reloading, so refreshes never flicker. */
export function useResource(load, key) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const latest = useRef(load);
  latest.current = load;
  const generation = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await latest.current();
      if (mine === generation.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === generation.current) setState((s) => ({ data: s.data, error, loading: false }));
    }
  }, []);
  useEffect(() => {
    setState({ data: null, error: null, loading: true });
    reload();
  }, [key]);
  return { ...state, reload };
}

export function Status({ value }) {
  return html`<span class=${`badge tone-${STATUS_TONE[value] ?? 'neutral'}`} data-status=${value}>${label(value)}</span>`;
}

export function Panel({ title, actions, children, id }) {
  return html`<section class="panel" id=${id}>
    <header class="panel-head"><h2>${title}</h2>${actions ? html`<div class="panel-actions">${actions}</div>` : null}</header>
    <div class="panel-body">${children}</div>
  </section>`;
}

/** What a refusal means for the operator, above the service's own words. */
const REFUSAL_HINTS = {
  SELF_APPROVAL: 'Four-eyes: you cannot approve what you requested or already approved once; another approver must.',
  FORBIDDEN: 'Your role may not do this.',
};

export function ErrorNote({ error }) {
  if (!error) return null;
  const hint = REFUSAL_HINTS[error.code];
  return html`<p class="error-note" role="alert" data-code=${error.code ?? 'Error'}>
    <strong>${error.code ?? 'Error'}</strong> ${hint && hint !== error.message ? html`${hint} <span class="detail">${error.message}</span>` : error.message}
  </p>`;
}

export function Empty({ children }) {
  return html`<p class="empty">${children}</p>`;
}

/** A transaction id or address the way explorers show it: the ends in monospace, the whole on hover and copy. */
export function Hash({ value, keep = 8 }) {
  const [copied, setCopied] = useState(false);
  if (!value) return html`<span class="muted">—</span>`;
  const copy = async (event) => {
    event.preventDefault();
    event.stopPropagation();
    try {
      await navigator.clipboard.writeText(value);
      setCopied(true);
      setTimeout(() => setCopied(false), 1200);
    } catch {
      // Clipboard refused (plain HTTP on another host): the tooltip still shows the whole value.
    }
  };
  return html`<span class="hash" title=${value}><code>${shortHash(value, keep)}</code><button type="button" class="copy" onClick=${copy} aria-label="Copy" title="Copy">${copied ? html`<svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true"><path d="M3 8.5l3 3 7-7" fill="none" stroke="currentColor" stroke-width="2" /></svg>` : html`<svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true"><rect x="5" y="5" width="9" height="9" rx="1.5" fill="none" stroke="currentColor" stroke-width="1.5" /><path d="M11 3.5V3a1.5 1.5 0 0 0-1.5-1.5h-6A1.5 1.5 0 0 0 2 3v6a1.5 1.5 0 0 0 1.5 1.5H4" fill="none" stroke="currentColor" stroke-width="1.5" /></svg>`}</button></span>`;
}

/**
 * A confirmation step before any state change: what will happen, an optional "force" for resolutions the chain
 * contradicts, and the service's refusal shown in place when it says no.
 */
export function ConfirmDialog({ title, description, confirmLabel, tone = 'primary', allowForce = false, onConfirm, onClose }) {
  const [force, setForce] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const dialog = useRef(null);
  useEffect(() => {
    dialog.current?.showModal?.();
  }, []);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await onConfirm({ force });
      onClose(true);
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<dialog ref=${dialog} class="confirm" onCancel=${(e) => { e.preventDefault(); if (!busy) onClose(false); }} data-testid="confirm-dialog">
    <h3>${title}</h3>
    <div class="confirm-text">${description}</div>
    ${allowForce
      ? html`<label class="force"><input type="checkbox" checked=${force} onChange=${(e) => setForce(e.currentTarget.checked)} /> Force: act even if the chain says otherwise (you checked the transfer elsewhere)</label>`
      : null}
    <${ErrorNote} error=${error} />
    <div class="confirm-buttons">
      <button type="button" class="button" onClick=${() => onClose(false)} disabled=${busy}>Back</button>
      <button type="button" class=${`button ${tone}`} onClick=${confirm} disabled=${busy} data-testid="confirm">${busy ? 'Working…' : confirmLabel}</button>
    </div>
  </dialog>`;
}

export function Toast({ message, onDone }) {
  useEffect(() => {
    if (!message) return undefined;
    const timer = setTimeout(onDone, 4000);
    return () => clearTimeout(timer);
  }, [message]);
  return message ? html`<div class="toast" role="status">${message}</div>` : null;
}
