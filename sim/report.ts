// The run's report: what ran, what was injected, what was checked, how fast; and, when an invariant broke, which,
// with what it saw and the operations that led there.
import type { FaultKind } from './faults/plan.js';

export interface LoggedOp {
  n: number;
  kind: string;
  did: string;
}

export interface Report {
  seed: string;
  ops: number;
  ok: boolean;
  invariant?: string;
  details?: string;
  /** The last operations before the break (or the end). */
  lastOps: LoggedOp[];
  opsByKind: Record<string, number>;
  faults: Partial<Record<FaultKind, number>>;
  /** A hash of every operation and what it did (the drain's rounds aside): the same seed replayed gives the same one. */
  digest: string;
  checks: number;
  payments: number;
  /** Milliseconds spent per operation kind and per check (for --profile). */
  spentMs: Record<string, number>;
  seconds: number;
  opsPerSecond: number;
}

export function formatReport(report: Report): string {
  const lines = [
    `seed ${report.seed}: ${report.ops} operations in ${report.seconds.toFixed(1)} s (${report.opsPerSecond.toFixed(0)} ops/s), ${report.payments} payments`,
    `operations: ${Object.entries(report.opsByKind).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ')}`,
    `faults injected: ${Object.entries(report.faults).sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`,
    `invariant checks made: ${report.checks}`,
    `replay digest: ${report.digest}`,
  ];
  if (report.ok) lines.push('every invariant held');
  else {
    lines.push(`BROKEN after operation ${report.lastOps.at(-1)?.n ?? 0}: ${report.invariant} (seed ${report.seed})`, `  ${report.details}`, 'last operations:');
    for (const op of report.lastOps) lines.push(`  #${op.n} ${op.kind}: ${op.did}`);
    lines.push(`replay: npm run simulate -- --seed ${report.seed} --ops ${report.ops}`);
  }
  return lines.join('\n');
}

/** One JSON line, for scripts (the mutants' runner). */
export function jsonReport(report: Report): string {
  const { seed, ops, ok, invariant, faults, digest, checks, opsPerSecond } = report;
  return JSON.stringify({ seed, ops, ok, ...(invariant ? { invariant, details: report.details } : {}), faults, digest, checks, opsPerSecond: Math.round(opsPerSecond) });
}
