// Whether each planted mutant still compiles: its changed files type-checked by the TypeScript compiler against the rest
// of the repository, with the planted text served in place of the file's own (nothing is written). Mutants are checked in
// rounds where no two share a file, one program per round reusing the previous one, so the whole list costs a few
// programs rather than one per mutant. Too slow for npm test (seconds per round); `simulate:mutants -- --typecheck`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type { Mutant } from './list.js';
import { plant } from './plant.js';

/** The syntax errors of a planted file's text (no types): cheap enough for every test run. */
export function syntaxErrors(file: string, text: string): string[] {
  const out = ts.transpileModule(text, { fileName: file, reportDiagnostics: true, compilerOptions: { module: ts.ModuleKind.NodeNext, target: ts.ScriptTarget.ES2022 } });
  return (out.diagnostics ?? []).map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' '));
}

/** Each mutant's type errors in the files it changes (none: it compiles), by mutant id. */
export function typeErrors(root: string, mutants: readonly Mutant[]): Map<string, string[]> {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error(`no tsconfig.json in ${root}`);
  const host = ts.createCompilerHost(config.options);
  const ownSourceFile = host.getSourceFile.bind(host);
  let served = new Map<string, string>();
  host.getSourceFile = (file, language, onError, create) =>
    served.has(file) ? ts.createSourceFile(file, served.get(file)!, language) : ownSourceFile(file, language, onError, create);

  const errors = new Map<string, string[]>();
  const planted = mutants.map((mutant) => ({ mutant, files: plant(mutant, (file) => readFileSync(join(root, file), 'utf8')) }));
  let previous: ts.Program | undefined;
  for (const round of rounds(planted)) {
    served = new Map(round.flatMap(({ files }) => [...files].map(([file, { after }]) => [join(root, file), after] as const)));
    const program = ts.createProgram({ rootNames: [...served.keys()], options: config.options, host, ...(previous ? { oldProgram: previous } : {}) });
    for (const { mutant, files } of round) {
      const found = [...files.keys()].flatMap((file) => {
        const source = program.getSourceFile(join(root, file))!;
        return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map(
          (d) => `${file}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
        );
      });
      errors.set(mutant.id, found);
    }
    previous = program;
  }
  return errors;
}

/** Mutants grouped so that no two of a group change the same file. */
function rounds<T extends { files: Map<string, unknown> }>(items: readonly T[]): T[][] {
  const groups: { items: T[]; files: Set<string> }[] = [];
  for (const item of items) {
    const files = [...item.files.keys()];
    let group = groups.find((g) => files.every((f) => !g.files.has(f)));
    if (!group) groups.push((group = { items: [], files: new Set() }));
    group.items.push(item);
    for (const f of files) group.files.add(f);
  }
  return groups.map((g) => g.items);
}
