// Chain health over time (GET /admin/chain-health: the collector's snapshots), route distribution and failure
// analysis, for the chains in CHAINS (chains.js). Charts refresh every collection period; nothing here needs the live
// stream.
import { html } from '../html.js';
import { useEffect } from 'preact/hooks';
import { api } from '../api.js';
import { LineChart } from '../chart.js';
import { chainColor, chainLabel, ChainName, useChains } from '../chains.js';
import { Empty, ErrorNote, Panel, Status, useResource } from '../components.js';
import { ago, decimal, label } from '../format.js';

const REFRESH_MS = 15_000;

const METRICS = [
  { key: 'estimated_fee_usd', title: 'Fee (USD)', format: (v) => `$${v < 0.01 ? v.toPrecision(2) : v.toFixed(2)}` },
  { key: 'avg_confirmation_seconds', title: 'Time to finality (s)', format: (v) => `${v.toFixed(v < 10 ? 1 : 0)} s` },
  { key: 'rpc_error_rate', title: 'RPC error rate', format: (v) => `${(v * 100).toFixed(1)}%` },
  { key: 'p95_latency_ms', title: 'P95 RPC latency (ms)', format: (v) => `${v.toFixed(0)} ms` },
  { key: 'congestion_score', title: 'Congestion (0–1)', format: (v) => v.toFixed(2) },
];

function useRefreshing(resource) {
  useEffect(() => {
    const timer = setInterval(() => resource.reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);
}

function Charts() {
  const history = useResource(() => api('/admin/chain-health?points=240'), 'history');
  useRefreshing(history);
  const snapshots = history.data ?? [];
  const chains = useChains();
  const latest = chains.map((chain) => snapshots.filter((s) => s.chain === chain).at(-1)).filter(Boolean);
  return html`
    <${Panel} title="Chain health now">
      <${ErrorNote} error=${history.error} />
      ${latest.length
        ? html`<table class="table" data-testid="health-now">
            <thead><tr><th>Chain</th><th>Status</th><th class="num">Fee</th><th class="num">Finality</th><th class="num">Errors</th><th class="num">P95</th><th class="num">Congestion</th><th>Recorded</th></tr></thead>
            <tbody>${latest.map(
              (s) => html`<tr><td><${ChainName} chain=${s.chain} /></td><td><${Status} value=${s.health_status} /></td>
                <td class="num">${METRICS[0].format(s.estimated_fee_usd)}</td><td class="num">${METRICS[1].format(s.avg_confirmation_seconds)}</td>
                <td class="num">${METRICS[2].format(s.rpc_error_rate)}</td><td class="num">${s.p95_latency_ms === null ? '—' : METRICS[3].format(s.p95_latency_ms)}</td>
                <td class="num">${s.congestion_score === null ? '—' : METRICS[4].format(s.congestion_score)}</td><td>${ago(s.recorded_at)} <span class="muted small">${s.source}</span></td></tr>`,
            )}</tbody>
          </table>`
        : html`<${Empty}>No snapshot yet: the collector records one per chain every HEALTH_COLLECT_SECONDS.</${Empty}>`}
    </${Panel}>
    <${Panel} title="Chain health over time">
      <div class="charts">
        ${METRICS.map(
          (m) => html`<${LineChart}
            title=${m.title}
            testId=${`chart-${m.key}`}
            format=${m.format}
            series=${chains.map((chain) => ({
              name: chainLabel(chain),
              color: chainColor(chains, chain),
              points: snapshots.filter((s) => s.chain === chain).map((s) => ({ t: Date.parse(s.recorded_at), v: s[m.key] })),
            }))}
          />`,
        )}
      </div>
    </${Panel}>`;
}

function Routes() {
  const chains = useChains();
  const distribution = useResource(() => api('/admin/route-distribution'), 'routes');
  useRefreshing(distribution);
  const rows = distribution.data ?? [];
  const total = rows.reduce((sum, r) => sum + Number(r.count), 0);
  return html`<${Panel} title="Route distribution">
    <${ErrorNote} error=${distribution.error} />
    ${rows.length === 0 && distribution.data ? html`<${Empty}>No payments yet.</${Empty}>` : null}
    <div class="bars" data-testid="route-distribution">
      ${rows.map(
        (r) => html`<div class="bar-row">
          <${ChainName} chain=${r.selected_chain} />
          <span class="bar"><i style=${{ width: `${total ? (100 * Number(r.count)) / total : 0}%`, background: chainColor(chains, r.selected_chain) }}></i></span>
          <span class="num">${r.count} payments · ${decimal(r.volume)} USDC</span>
        </div>`,
      )}
    </div>
  </${Panel}>`;
}

function Failures() {
  const failures = useResource(() => api('/admin/failures'), 'failures');
  useRefreshing(failures);
  const rows = failures.data ?? [];
  return html`<${Panel} title="Failure analysis">
    <${ErrorNote} error=${failures.error} />
    ${rows.length === 0 && failures.data ? html`<${Empty}>No failed attempt.</${Empty}>` : null}
    ${rows.length
      ? html`<table class="table" data-testid="failures">
          <thead><tr><th>Reason</th><th>Chain</th><th class="num">Attempts</th></tr></thead>
          <tbody>${rows.map((r) => html`<tr><td>${label(r.failure_reason)}</td><td><${ChainName} chain=${r.chain} /></td><td class="num">${r.count}</td></tr>`)}</tbody>
        </table>`
      : null}
  </${Panel}>`;
}

/** DATABASE_READ_URL: where the payment list, the exports and the metrics gauges read, and how far behind it is. */
function ReadReplica() {
  const replica = useResource(() => api('/admin/read-replica'), 'read-replica');
  useRefreshing(replica);
  const r = replica.data;
  const lag = r?.lag_seconds ?? 0;
  return html`<${Panel} title="Read replica">
    <${ErrorNote} error=${replica.error} />
    ${r && !r.configured ? html`<${Empty}>Not configured: lists, exports and metrics read the primary (DATABASE_READ_URL).</${Empty}>` : null}
    ${r?.configured
      ? html`<p data-testid="read-replica">
          ${r.standby ? 'Standby' : 'Primary'} · lag <strong data-testid="read-replica-lag">${lag < 10 ? lag.toFixed(1) : lag.toFixed(0)} s</strong>
          <span class="muted small"> · the payment list, exports and metrics gauges read here; balances, nonces, policies and approvals never do</span>
        </p>`
      : null}
  </${Panel}>`;
}

export function HealthPage() {
  return html`<div class="page"><${Charts} /><div class="grid two"><${Routes} /><${Failures} /></div><${ReadReplica} /></div>`;
}
