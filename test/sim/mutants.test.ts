// The planted bugs of `npm run simulate:mutants` still plant on the current code: each text once in its file, the
// replacement a change, the file still parsing. (That each compiles is `npm run simulate:mutants -- --typecheck`:
// a type check per mutant is too slow for every test run.)
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MUTANTS } from '../../sim/mutants/list.js';
import { MutantTextError, occurrences, plant } from '../../sim/mutants/plant.js';
import { syntaxErrors } from '../../sim/mutants/typecheck.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

describe('the mutant list', () => {
  it('holds at least ten mutants with distinct ids, each naming its bug and the invariant expected to catch it', () => {
    expect(MUTANTS.length).toBeGreaterThanOrEqual(10);
    expect(new Set(MUTANTS.map((m) => m.id)).size).toBe(MUTANTS.length);
    for (const m of MUTANTS) {
      expect(m.id, m.id).toMatch(/^[a-z0-9-]+$/);
      expect(m.bug.length, m.id).toBeGreaterThan(20);
      expect(m.invariant.length, m.id).toBeGreaterThan(5);
      expect(m.edits.length, m.id).toBeGreaterThan(0);
      for (const edit of m.edits) expect(edit.file, m.id).toMatch(/^src\/.+\.ts$/);
    }
  });

  it.each(MUTANTS.map((m) => [m.id, m] as const))('%s: each text occurs once, is changed, and the planted file still parses', (_id, mutant) => {
    for (const edit of mutant.edits) {
      expect(occurrences(read(edit.file), edit.find), `${edit.file}: ${edit.find}`).toBe(1);
      expect(edit.replace).not.toBe(edit.find);
    }
    const planted = plant(mutant, read);
    for (const [file, { before, after }] of planted) {
      expect(after, file).not.toBe(before);
      expect(syntaxErrors(file, before), file).toEqual([]);
      expect(syntaxErrors(file, after), file).toEqual([]);
    }
  });
});

describe('planting', () => {
  const mutant = (find: string) => ({ id: 'm', bug: 'a bug', invariant: 'i', edits: [{ file: 'src/x.ts', find, replace: 'b' }] });

  it('refuses a text found twice or not at all, so a moved piece of code is seen', () => {
    expect(() => plant(mutant('a'), () => 'a a')).toThrow(MutantTextError);
    expect(() => plant(mutant('c'), () => 'a a')).toThrow(/occurs 0 times in src\/x\.ts/);
    expect(plant(mutant('a a'), () => 'x a a y').get('src/x.ts')).toEqual({ before: 'x a a y', after: 'x b y' });
  });

  it('applies the edits of one file in order, each to what the one before left', () => {
    const two = {
      id: 'm',
      bug: 'a bug',
      invariant: 'i',
      edits: [
        { file: 'src/x.ts', find: 'one', replace: 'two' },
        { file: 'src/x.ts', find: 'two two', replace: 'three' },
      ],
    };
    expect(plant(two, () => 'one two').get('src/x.ts')!.after).toBe('three');
  });

  it('counts occurrences that do not overlap', () => {
    expect(occurrences('aaaa', 'aa')).toBe(2);
    expect(occurrences('abc', '')).toBe(0);
  });

  it('finds a syntax error in a planted file', () => {
    expect(syntaxErrors('src/x.ts', 'const a = ;')).not.toEqual([]);
  });
});
