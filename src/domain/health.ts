// A chain's health: its three statuses, and how a window of RPC probes turns into one. Pure.

/** What routing makes of a chain (src/routing/score.ts): healthy, degraded (scored lower), unhealthy (disqualified). */
export type HealthStatus = 'healthy' | 'degraded' | 'unhealthy';

export interface ProbeSample {
  ok: boolean;
  latencyMs: number;
}

export interface Assessment {
  health_status: HealthStatus;
  rpc_error_rate: number;
  p95_latency_ms: number | null;
}

/** Probes considered per chain: at the default 15 s period, the last 5 minutes. */
export const PROBE_WINDOW = 20;
export const UNHEALTHY_ERROR_RATE = 0.5;
export const DEGRADED_ERROR_RATE = 0.1;
export const DEGRADED_P95_MS = 2_000;
export const DEGRADED_CONGESTION = 0.8;
/** This many failed probes in a row make a chain unhealthy whatever the window says. */
export const CONSECUTIVE_FAILURES_UNHEALTHY = 3;

export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}

/** `recent` is newest first. */
export function assess(recent: readonly ProbeSample[], congestion: number | null): Assessment {
  const window = recent.slice(0, PROBE_WINDOW);
  if (window.length === 0) return { health_status: 'healthy', rpc_error_rate: 0, p95_latency_ms: null };
  const failures = window.filter((p) => !p.ok).length;
  const errorRate = Math.round((failures / window.length) * 10_000) / 10_000;
  const p95 = percentile(
    window.filter((p) => p.ok).map((p) => p.latencyMs),
    95,
  );
  const consecutive = window.findIndex((p) => p.ok);
  const leadingFailures = consecutive === -1 ? window.length : consecutive;
  let status: HealthStatus = 'healthy';
  if (errorRate >= UNHEALTHY_ERROR_RATE || leadingFailures >= CONSECUTIVE_FAILURES_UNHEALTHY) status = 'unhealthy';
  else if (errorRate >= DEGRADED_ERROR_RATE || (p95 ?? 0) > DEGRADED_P95_MS || (congestion ?? 0) > DEGRADED_CONGESTION) status = 'degraded';
  return { health_status: status, rpc_error_rate: errorRate, p95_latency_ms: p95 };
}
