// The console's only way to the service: same-origin fetches of the /admin JSON endpoints. State-changing calls are
// POSTs with a JSON body, so a cross-site form can never forge one. The operator signs in with a bearer token (an
// operator's, or ADMIN_TOKEN), kept in sessionStorage for this tab only (decision 112) and sent on every request, the
// live stream included (which is why the stream is read with fetch, not EventSource: EventSource cannot send headers).

const TOKEN_KEY = 'stableroute.adminToken';

export function adminToken() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setAdminToken(token) {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

const authListeners = new Set();
/** `listener(token)` when a request sent with `token` (null: none) was refused for want of a valid one (401). */
export function onAuthRequired(listener) {
  authListeners.add(listener);
  return () => authListeners.delete(listener);
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.code ?? 'HTTP_ERROR';
  }
}

function headers(token, extra = {}) {
  const result = { accept: 'application/json', ...extra };
  if (token) result.authorization = `Bearer ${token}`;
  return result;
}

/**
 * One request. `token`: undefined sends the tab's token, null none, a string that one (the sign-in check). `quiet`
 * keeps a 401 from ending the session (the sign-in page's own checks).
 */
export async function api(path, { method = 'GET', body, signal, token, quiet = false } = {}) {
  const sent = token === undefined ? adminToken() : token;
  const init = { method, headers: headers(sent, body === undefined ? {} : { 'content-type': 'application/json' }), credentials: 'same-origin', cache: 'no-store', signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(path, init);
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (response.status === 401 && !quiet) for (const listener of authListeners) listener(sent);
  if (!response.ok) throw new ApiError(response.status, json);
  return json;
}

export const post = (path, body = {}) => api(path, { method: 'POST', body });

/**
 * Saves what `path` answers (a CSV export) as `filename` (decision 158). A plain link cannot send the tab's token, so
 * the file is fetched with it and handed to the browser as a blob: it sits in the page's memory until saved, which
 * suits a month's payments; larger exports are for `stableroute export` or curl with a token (docs/operating.md).
 */
export async function download(path, filename) {
  const token = adminToken();
  const response = await fetch(path, { headers: headers(token, { accept: 'text/csv' }), credentials: 'same-origin', cache: 'no-store' });
  if (response.status === 401) for (const listener of authListeners) listener(token);
  if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => null));
  const url = URL.createObjectURL(await response.blob());
  const link = Object.assign(document.createElement('a'), { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  // The browser reads the blob after this task; revoked a minute later, when the save has long started.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Builds a query string from the defined, non-empty values of `params`. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The live stream (GET /admin/events, server-sent events) read with fetch, reconnecting with backoff.
 * onEvent(type, data) for each event; onState('live' | 'reconnecting'). Returns a function that stops it.
 */
export function liveEvents(onEvent, onState) {
  let stopped = false;
  let controller = null;
  let retryMs = 1000;
  (async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        const token = adminToken();
        const response = await fetch('/admin/events', { headers: headers(token, { accept: 'text/event-stream' }), signal: controller.signal, cache: 'no-store' });
        if (response.status === 401) for (const listener of authListeners) listener(token);
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        onState('live');
        retryMs = 1000;
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let type = 'message';
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith('event: ')) type = line.slice(7);
              else if (line.startsWith('data: ')) data += line.slice(6);
            }
            if (data) {
              try {
                onEvent(type, JSON.parse(data));
              } catch {
                // A malformed event is skipped; the next refresh shows the truth anyway.
              }
            }
          }
        }
      } catch {
        // Reconnect below.
      }
      if (stopped) return;
      onState('reconnecting');
      await sleep(retryMs);
      retryMs = Math.min(30_000, retryMs * 2);
    }
  })();
  return () => {
    stopped = true;
    controller?.abort();
  };
}
