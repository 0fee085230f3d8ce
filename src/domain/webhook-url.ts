// What a merchant's webhook_url may be, checked wherever one is set (`merchants create`, DEV_MERCHANT_WEBHOOK_URL)
// and again before every delivery. Pure: the address checks that need DNS live in src/webhook-client/destination-guard.ts.

/** Long enough for any real endpoint, short enough to keep out of the way in logs and admin views. */
export const WEBHOOK_URL_MAX_CHARS = 2048;

export type ParsedWebhookUrl = { ok: true; url: URL } | { ok: false; problem: string };

/**
 * An absolute http(s) URL with a host and without credentials. Credentials are refused rather than stripped: a
 * `user:pass@` URL cannot be delivered to (fetch refuses it) and its password would end up in logs and in
 * webhook_deliveries. The problem text never repeats the URL, which may hold a secret.
 */
export function parseWebhookUrl(raw: string): ParsedWebhookUrl {
  if (raw.length > WEBHOOK_URL_MAX_CHARS) return { ok: false, problem: `is longer than ${WEBHOOK_URL_MAX_CHARS} characters` };
  // WHATWG parsing is lenient ("http:///x" has the host "x"): the host must follow the "//" as written.
  if (!/^https?:\/\/[^/?#\\]/i.test(raw)) return { ok: false, problem: 'must be an http(s) URL with a host, like https://example.com/hooks' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, problem: 'is not a valid URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, problem: 'must use http or https' };
  if (url.hostname === '') return { ok: false, problem: 'has no host' };
  if (url.username !== '' || url.password !== '') {
    return { ok: false, problem: 'must not contain credentials (user:password@); authenticate the webhook by its signature' };
  }
  return { ok: true, url };
}

/** The URL without any user:password part, for logs and delivery records. Returns the input when it does not parse. */
export function redactWebhookUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.username === '' && url.password === '') return raw;
    url.username = '';
    url.password = '';
    return url.toString();
  } catch {
    return raw;
  }
}
