// The sign-in page: shown when the service wants a token (GET /admin/me answered 401), after signing out, and when a
// session ends (the token was rotated or its operator disabled). The token is checked with GET /admin/me before it is
// kept, in sessionStorage for this tab only (decision 112). In development on loopback no token is needed: the page
// then also offers to go on as `local`.
import { html } from '../html.js';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote } from '../components.js';

const NOTICES = {
  'signed-out': 'You signed out. The token was removed from this tab.',
  ended: 'Your session ended: the service no longer accepts that token (rotated, or its operator disabled). Sign in again.',
};

const REFUSED = 'The service did not accept this token: it is unknown, was rotated out, or its operator is disabled. Check for typos, or ask an admin for a new one (stableroute operators token rotate).';

/** onSignedIn(me, token): token null for `local` (development, loopback, no token). */
export function SignInPage({ notice, onSignedIn }) {
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [local, setLocal] = useState(null);
  useEffect(() => {
    // Does this service answer without a token (development, from loopback)? Then that is offered too.
    api('/admin/me', { token: null, quiet: true }).then(setLocal, () => setLocal(null));
  }, []);
  const submit = async (event) => {
    event.preventDefault();
    const token = value.trim();
    if (!token) return;
    setBusy(true);
    setError(null);
    try {
      const me = await api('/admin/me', { token, quiet: true });
      onSignedIn(me, token);
    } catch (e) {
      setError(e.status === 401 ? { code: 'UNAUTHORIZED', message: REFUSED } : e);
      setBusy(false);
    }
  };
  return html`<div class="signin-page">
    <form class="signin panel" data-testid="signin" onSubmit=${submit}>
      <h1><img src="/console/favicon.svg" alt="" width="26" height="26" /> stableroute console</h1>
      ${notice && NOTICES[notice] ? html`<p class="notice" role="status" data-testid="signin-notice">${NOTICES[notice]}</p>` : null}
      <label for="token">Operator token</label>
      <input id="token" name="token" type="password" autocomplete="off" spellcheck="false" placeholder="sr_op_…" value=${value}
        onInput=${(e) => setValue(e.currentTarget.value)} autofocus />
      <${ErrorNote} error=${error} />
      <button class="button primary" type="submit" disabled=${busy || !value.trim()}>${busy ? 'Checking…' : 'Sign in'}</button>
      <p class="muted small">
        The token <code>stableroute operators create</code> printed for you (or <code>ADMIN_TOKEN</code>, the break-glass admin).
        It is kept in this tab only (sessionStorage) until you sign out or close the tab.
      </p>
      ${local
        ? html`<p class="small"><button type="button" class="linklike" onClick=${() => onSignedIn(local, null)}>Continue as ${local.name ?? local.actor}</button>
            <span class="muted"> without a token (development, from this machine).</span></p>`
        : null}
    </form>
  </div>`;
}
