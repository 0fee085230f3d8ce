// Planting a mutant: each edit's text must occur exactly once in its file, else planting fails loudly (a refactor moved
// the code, and the mutant would plant nothing or the wrong thing). Pure over file texts; the runner reads and writes.
import type { Edit, Mutant } from './list.js';

export class MutantTextError extends Error {
  override readonly name = 'MutantTextError';
  constructor(
    readonly mutantId: string,
    readonly file: string,
    readonly found: number,
  ) {
    super(`mutant ${mutantId}: its text occurs ${found} times in ${file}, not once; the code moved, update sim/mutants/list.ts`);
  }
}

/** How many times `find` occurs in `text` (occurrences may not overlap). */
export function occurrences(text: string, find: string): number {
  if (find.length === 0) return 0;
  let count = 0;
  for (let at = text.indexOf(find); at !== -1; at = text.indexOf(find, at + find.length)) count++;
  return count;
}

/**
 * The files a mutant changes, each with its text before and after every edit of the mutant that touches it, applied
 * in order. `read` gives a file's current text (from the repository, or a scratch copy of it).
 */
export function plant(mutant: Mutant, read: (file: string) => string): Map<string, { before: string; after: string }> {
  const files = new Map<string, { before: string; after: string }>();
  for (const edit of mutant.edits) {
    const entry = files.get(edit.file) ?? { before: read(edit.file), after: read(edit.file) };
    entry.after = applyEdit(mutant.id, entry.after, edit);
    files.set(edit.file, entry);
  }
  return files;
}

function applyEdit(mutantId: string, text: string, edit: Edit): string {
  const found = occurrences(text, edit.find);
  if (found !== 1) throw new MutantTextError(mutantId, edit.file, found);
  if (edit.replace === edit.find) throw new Error(`mutant ${mutantId}: its replacement in ${edit.file} changes nothing`);
  const at = text.indexOf(edit.find);
  return text.slice(0, at) + edit.replace + text.slice(at + edit.find.length);
}
