// The runner's report: one row per mutant (caught or not, the seed, the invariant, the time), and the budget it ran
// with. Pure.
import type { Budget, MutantResult } from './runner.js';

export function resultsTable(results: readonly MutantResult[], budget: Budget): string {
  const rows = results.map((r) => [
    r.id,
    r.kind,
    r.kind === 'caught' || r.kind === 'error' ? String(r.seed ?? '-') : '-',
    r.kind === 'caught' ? r.invariant : r.kind === 'missed' ? `none in ${r.runs} seeds` : firstLine(r.details),
    `${r.seconds.toFixed(1)}s`,
  ]);
  const header = ['mutant', 'result', 'seed', 'invariant', 'time'];
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c]!.length)));
  const line = (cells: readonly string[]) => cells.map((cell, c) => (c === cells.length - 1 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!))).join('  ');
  const caught = results.filter((r) => r.kind === 'caught').length;
  const last = budget.seedFirst + budget.seeds - 1;
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `${caught} of ${results.length} mutants caught; budget: seeds ${budget.seedFirst}..${last}, ${budget.ops} operations each`,
  ].join('\n');
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 97)}...` : line;
}
