// What one simulator run said, read from its exit code and its `--json` output. Pure. The simulator's report names the
// broken invariant; the reader looks for it under the names a report may give it (invariant, broken, violation), so the
// harness does not break when the report's shape grows.

export type RunVerdict =
  /** Exit 0: every invariant held for this seed. */
  | { kind: 'clean' }
  /** Non-zero exit naming a broken invariant: the simulator caught something. */
  | { kind: 'broken'; invariant: string; details: string }
  /** Non-zero exit without an invariant (a crash, a compile error of the planted code), or killed at its deadline. */
  | { kind: 'error'; details: string };

const TAIL_CHARS = 600;

export function readRun(result: { code: number | null; timedOut: boolean; stdout: string; stderr: string }): RunVerdict {
  if (result.timedOut) return { kind: 'error', details: `no answer within its deadline; ${tail(result.stderr || result.stdout)}` };
  if (result.code === 0) return { kind: 'clean' };
  const report = lastJsonObject(result.stdout);
  const named = report === null ? null : invariantIn(report, 0);
  if (named) return { kind: 'broken', invariant: named.name, details: named.details };
  // A report that is not JSON (or a simulator without --json): the text still names the invariant.
  const text = `${result.stdout}\n${result.stderr}`;
  const match = /(?:broken invariant|invariant broken|invariant)\s*[:=]?\s*["'`]?([A-Za-z][\w./-]*)/i.exec(text);
  if (match && !/^(checks?|checked)$/i.test(match[1]!)) return { kind: 'broken', invariant: match[1]!, details: tail(text) };
  return { kind: 'error', details: `exit ${result.code}; ${firstError(result.stderr)}${tail(result.stderr || result.stdout)}` };
}

/** The last line of `stdout` that is a JSON object, or the whole of it when it is one. */
export function lastJsonObject(stdout: string): Record<string, unknown> | null {
  const whole = parseObject(stdout.trim());
  if (whole) return whole;
  const lines = stdout.split('\n').map((line) => line.trim()).filter((line) => line.startsWith('{'));
  for (let i = lines.length - 1; i >= 0; i--) {
    const parsed = parseObject(lines[i]!);
    if (parsed) return parsed;
  }
  return null;
}

function parseObject(text: string): Record<string, unknown> | null {
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const CONTAINERS = ['broken', 'violation', 'failure', 'brokenInvariant', 'broken_invariant', 'invariant', 'result', 'error'];
const DEPTH_MAX = 3;

function invariantIn(report: Record<string, unknown>, depth: number): { name: string; details: string } | null {
  for (const key of CONTAINERS) {
    const value = report[key];
    if (key.toLowerCase().includes('invariant') && typeof value === 'string' && value.length > 0) return { name: value, details: detailsOf(report) };
    if (!isObject(value)) continue;
    for (const nameKey of ['invariant', 'name']) {
      const name = value[nameKey];
      if (typeof name === 'string' && name.length > 0 && (nameKey === 'invariant' || key !== 'error')) return { name, details: detailsOf(value) };
    }
    if (depth < DEPTH_MAX) {
      const inner = invariantIn(value, depth + 1);
      if (inner) return inner;
    }
  }
  return null;
}

function detailsOf(value: Record<string, unknown>): string {
  const details = value.details ?? value.detail ?? value.message;
  return tail(typeof details === 'string' ? details : details === undefined ? '' : JSON.stringify(details));
}

/** The first line of a crash that names its error (the stack's tail alone does not say what broke), with a separator. */
function firstError(stderr: string): string {
  const line = stderr.split('\n').find((l) => /^\s*(?:\w+\s)?\w*Error\b(?:\s\[\w+\])?:/.test(l));
  return line ? `${line.trim()} | ` : '';
}

function tail(text: string): string {
  const trimmed = text.trim();
  return trimmed.length <= TAIL_CHARS ? trimmed : `...${trimmed.slice(-TAIL_CHARS)}`;
}
