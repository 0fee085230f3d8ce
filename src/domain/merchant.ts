// What an operator may name a merchant. Pure.
import { hasControlCharacters, isWellFormedText } from './text.js';

export const MERCHANT_NAME_MAX_CHARS = 200;

/** Why a (trimmed) merchant name is refused, or null. Names show up in admin views, logs and terminals. */
export function merchantNameProblem(name: string): string | null {
  if (name === '') return 'is required';
  if ([...name].length > MERCHANT_NAME_MAX_CHARS) return `is longer than ${MERCHANT_NAME_MAX_CHARS} characters`;
  if (hasControlCharacters(name)) return 'must not contain control characters (newlines, tabs, escapes)';
  if (!isWellFormedText(name)) return 'is not well-formed Unicode';
  return null;
}
