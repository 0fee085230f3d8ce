// How a command ends when it cannot do what it was asked: a usage problem is exit 2 with the usage text, a refusal by
// the service (an AppError) is exit 1 with its code and message. Output goes to stderr; stdout stays for results.
import { AppError } from '../domain/errors.js';

/** Exit 2: the usage text, after the problem when there is one. */
export function usage(text: string, problem?: string): number {
  process.stderr.write(`${problem ? `${problem}\n` : ''}${text}`);
  return 2;
}

/** Runs a command body; an AppError it throws is exit 1 with its code on stderr, anything else is rethrown. */
export async function refusable(fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    process.stderr.write(`${error.code}: ${error.message}\n`);
    return 1;
  }
}
