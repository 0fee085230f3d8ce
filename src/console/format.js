// Display helpers. Amounts arrive as the API sends them (amount_usd numbers, exact decimal strings elsewhere) and are
// only formatted here, never computed with.

export function usd(amount) {
  if (amount === null || amount === undefined) return '—';
  return `$${Number(amount).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 6 })}`;
}

/** An exact decimal string, grouped for reading, without going through a float. */
export function decimal(text) {
  if (text === null || text === undefined) return '—';
  const [whole, fraction] = String(text).split('.');
  const negative = whole.startsWith('-');
  const digits = negative ? whole.slice(1) : whole;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${negative ? '−' : ''}${grouped}${fraction ? `.${fraction}` : ''}`;
}

export function dateTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 23)} UTC`;
}

/** 12:04:31.207: the time of day in tables, the whole date in a tooltip. */
export function clock(iso) {
  return iso ? new Date(iso).toISOString().slice(11, 23) : '—';
}

export function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (seconds < 0) return 'just now';
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86400)}d ago`;
}

export function duration(fromIso, toIso) {
  if (!fromIso || !toIso) return '';
  const ms = new Date(toIso).getTime() - new Date(fromIso).getTime();
  if (ms < 1000) return `+${ms} ms`;
  if (ms < 60_000) return `+${(ms / 1000).toFixed(1)} s`;
  return `+${Math.round(ms / 60_000)} min`;
}

/** 0x1234…cdef: the ends an operator compares, the whole in a tooltip and on copy. */
export function shortHash(text, keep = 6) {
  if (!text) return '—';
  return text.length <= keep * 2 + 1 ? text : `${text.slice(0, keep)}…${text.slice(-keep)}`;
}

export const STATUS_TONE = {
  created: 'neutral',
  quoted: 'neutral',
  route_selected: 'neutral',
  broadcasting: 'progress',
  broadcasted: 'progress',
  pending_confirmation: 'progress',
  retrying: 'warn',
  manual_review: 'alert',
  settled: 'good',
  failed: 'bad',
  expired: 'muted',
  cancelled: 'muted',
  // attempts, webhook events, reconciliation, health
  signed: 'neutral',
  confirmed: 'good',
  replaced: 'muted',
  pending: 'progress',
  delivered: 'good',
  stored: 'muted',
  ok: 'good',
  in_flight: 'progress',
  mismatch: 'bad',
  error: 'bad',
  healthy: 'good',
  degraded: 'warn',
  unhealthy: 'bad',
  // inbound transfers
  native: 'neutral',
  funding: 'good',
  unmatched: 'alert',
  ambiguous: 'alert',
  matched: 'good',
  attached: 'good',
  // operator alerts
  open: 'alert',
  resolved: 'muted',
  // operator approvals
  approved: 'good',
  rejected: 'bad',
};

export const label = (status) => String(status).replaceAll('_', ' ');
