#!/usr/bin/env node
// Rewrites citations of decision numbers from before issue 26 ("decision 145", "decisions 75 to 81") to the numbers
// they have now, by the forwarding table at the end of docs/decisions.md. For a branch written against the old
// numbers: run it there, on the files the branch changed, before merging it, so that each citation is forwarded once.
//
//   node scripts/forward-decision-citations.mjs [--table PATH] [--write] FILE...
//
// Without --write it only prints what it would change. A citation of an old entry that was split names its main part
// (the first number of "a+b" in the table); check those by hand. Files named docs/decisions.md are skipped.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { table: { type: 'string', default: 'docs/decisions.md' }, write: { type: 'boolean', default: false } },
  allowPositionals: true,
});

const forwardingTable = readFileSync(values.table, 'utf8').split(/^## Forwarding table$/m)[1];
if (forwardingTable === undefined) throw new Error(`${values.table} has no "## Forwarding table" section`);
/** Old number -> [main new number, other parts...]. */
const forward = new Map([...forwardingTable.matchAll(/(\d+)→([\d+]+)/g)].map(([, from, to]) => [Number(from), to.split('+').map(Number)]));

const CITATION = /\b([Dd]ecisions?)([ \t]+|[ \t]*\n[ \t]*(?:\/\/|\*|--|#)?[ \t]*)(\d+(?:[ \t]*(?:,|\band\b|\bto\b|-|–)[ \t]*\d+)*)/g;

/** The old numbers a citation names, ranges expanded over the numbers the table knows. */
function citedNumbers(text) {
  const parts = text.split(/[ \t]*(,|\band\b|\bto\b|-|–)[ \t]*/);
  const numbers = [Number(parts[0])];
  for (let i = 1; i < parts.length; i += 2) {
    const next = Number(parts[i + 1]);
    if (parts[i] === ',' || parts[i] === 'and') {
      numbers.push(next);
      continue;
    }
    const from = numbers.pop();
    for (let n = from; n <= next; n += 1) if (forward.has(n) || n === from || n === next) numbers.push(n);
  }
  return numbers;
}

/** "3, 5-7, 9": sorted, runs of three or more as ranges. */
function render(numbers) {
  const sorted = [...new Set(numbers)].sort((a, b) => a - b);
  const runs = [];
  for (const n of sorted) {
    const last = runs.at(-1);
    if (last && n === last[1] + 1) last[1] = n;
    else runs.push([n, n]);
  }
  return runs.map(([a, b]) => (a === b ? `${a}` : b === a + 1 ? `${a}, ${b}` : `${a}-${b}`)).join(', ');
}

let unknown = 0;
for (const file of positionals.filter((path) => !path.endsWith('docs/decisions.md'))) {
  if (!existsSync(file)) {
    console.log(`${file}: no such file, skipped`);
    continue;
  }
  const text = readFileSync(file, 'utf8');
  const rewritten = text.replace(CITATION, (citation, word, gap, list, offset) => {
    const line = text.slice(0, offset).split('\n').length;
    const old = citedNumbers(list);
    const missing = old.filter((n) => !forward.has(n));
    if (missing.length > 0) {
      unknown += 1;
      console.log(`${file}:${line}: "${citation.replace(/\s+/g, ' ')}" names ${missing.join(', ')}, not in the table: left alone`);
      return citation;
    }
    const now = [...new Set(old.map((n) => forward.get(n)[0]))];
    const split = old.filter((n) => forward.get(n).length > 1);
    const replacement = `${word.replace(/s$/, '')}${now.length > 1 ? 's' : ''}${gap}${render(now)}`;
    const note = split.length > 0 ? `   (split: ${split.map((n) => `${n}→${forward.get(n).join('+')}`).join(', ')}; check)` : '';
    console.log(`${file}:${line}: "${citation.replace(/\s+/g, ' ')}" -> "${replacement.replace(/\s+/g, ' ')}"${note}`);
    return replacement;
  });
  if (values.write && rewritten !== text) writeFileSync(file, rewritten);
}
if (unknown > 0) process.exitCode = 1;
