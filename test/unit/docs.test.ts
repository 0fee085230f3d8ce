// The documentation holds together: every relative link in README.md, docs/ and examples/ reaches a file (and its
// heading, for an anchor), every decision the code and the docs cite exists, and docs/decisions.md stays a page of
// short entries (six lines or fewer each), with its forwarding table pointing at entries that exist; the README's
// configuration table lists every variable the service reads.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** Files under `dir` (relative to the root) whose names end with one of `endings`. */
function filesUnder(dir: string, endings: readonly string[]): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && endings.some((ending) => entry.name.endsWith(ending)))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)))
    .filter((path) => !path.split('/').includes('node_modules'));
}

const MARKDOWN = ['README.md', ...filesUnder('docs', ['.md']), ...filesUnder('examples', ['.md'])];

/** Markdown without fenced code blocks and inline code, where links are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, ... */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, text] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const plain = text!.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/`/g, '');
    const slug = plain.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

describe('relative links', () => {
  it.each(MARKDOWN)('in %s reach an existing file and heading', (file) => {
    const broken: string[] = [];
    for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target!)) continue; // http:, https:, mailto:
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const linked = path === '' ? file : join(dirname(file), decodeURIComponent(path));
      if (!existsSync(join(ROOT, linked))) {
        broken.push(`${target} (no file ${linked})`);
      } else if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(read(linked)).has(anchor)) {
        broken.push(`${target} (no heading #${anchor} in ${linked})`);
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the configuration table (docs/configuration.md)', () => {
  it('lists every variable src/config.ts reads', () => {
    const config = read('src/config.ts');
    const variables = new Set([...config.matchAll(/\(env, '([A-Z0-9_]+)'/g)].map(([, name]) => name!));
    // A secret may come from a file instead: NAME_FILE.
    for (const [, name] of config.matchAll(/\b(?:secret|requiredSecret|refuseTreasuryKey)\(env, '([A-Z0-9_]+)'/g)) variables.add(`${name}_FILE`);
    // A chain's settings are named NAME_<SUFFIX> from CHAINS (setting('RPC_URL') is BASE_RPC_URL for base): the table lists the pattern.
    for (const [, suffix] of config.matchAll(/\bsetting\('([A-Z0-9_]+)'\)/g)) variables.add(`NAME_${suffix}`);
    const table = read('docs/configuration.md');
    expect(variables.size).toBeGreaterThan(50);
    expect([...variables].filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
  });
});

const DECISIONS = read('docs/decisions.md');
const [ENTRIES_TEXT, FORWARDING_TEXT = ''] = DECISIONS.split(/^## Forwarding table$/m) as [string, string?];
const ENTRY_NUMBERS = [...ENTRIES_TEXT.matchAll(/^(\d+)\. /gm)].map(([, n]) => Number(n));

describe('docs/decisions.md', () => {
  it('numbers each entry once', () => {
    expect(ENTRY_NUMBERS.length).toBeGreaterThan(100);
    expect(new Set(ENTRY_NUMBERS).size).toBe(ENTRY_NUMBERS.length);
  });

  it('keeps every entry to six lines or fewer: measurements belong in docs/performance.md', () => {
    const long = ENTRIES_TEXT.split(/^(?=\d+\. )/m)
      .filter((entry) => /^\d+\. /.test(entry))
      .map((entry) => ({ entry: entry.slice(0, entry.indexOf('**', 5) + 2), lines: entry.split('\n\n')[0]!.trimEnd().split('\n').length }))
      .filter(({ lines }) => lines > 6);
    expect(long).toEqual([]);
  });

  it('forwards every old number to an entry that exists', () => {
    const targets = [...FORWARDING_TEXT.matchAll(/\d+→([\d+]+)/g)].flatMap(([, to]) => to!.split('+').map(Number));
    expect(targets.length).toBeGreaterThan(100);
    expect(targets.filter((n) => !ENTRY_NUMBERS.includes(n))).toEqual([]);
  });
});

/** "decision 12", "decisions 3, 5 and 7", "decisions 40-47", "decisions 6 to 9", also across a comment's line break. */
const CITATION = /\b[Dd]ecisions?(?:[ \t]+|[ \t]*\n[ \t]*(?:\/\/|\*|--|#)?[ \t]*)(\d+(?:[ \t]*(?:,|\band\b|\bto\b|-|–)[ \t]*\d+)*)/g;

describe('decision citations', () => {
  const sources = [
    'README.md',
    ...filesUnder('src', ['.ts', '.js', '.sql', '.css', '.html']),
    ...filesUnder('test', ['.ts']),
    ...filesUnder('bench', ['.ts']),
    ...filesUnder('examples', ['.ts', '.md']),
    ...filesUnder('docs', ['.md']).filter((file) => file !== 'docs/decisions.md'),
  ];

  it('name entries of docs/decisions.md', () => {
    const unknown: string[] = [];
    for (const file of sources) {
      const text = file === 'docs/decisions.md' ? ENTRIES_TEXT : read(file);
      for (const [citation, numbers] of text.matchAll(CITATION)) {
        const cited = numbers!.split(/[ \t]*(?:,|\band\b|\bto\b|-|–)[ \t]*/).map(Number);
        const missing = cited.filter((n) => !ENTRY_NUMBERS.includes(n));
        if (missing.length > 0) unknown.push(`${file}: "${citation.replace(/\s+/g, ' ')}"`);
      }
    }
    expect(unknown).toEqual([]);
  });
});
