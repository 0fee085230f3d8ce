// Rules for free text that we store and show: identifiers chosen by clients, names chosen by operators. Pure.

// With the `u` flag a well-formed surrogate pair is one code point, so \p{Cs} matches only a lone surrogate.
const LONE_SURROGATE = /\p{Cs}/u;
// C0 controls, DEL and the C1 controls: invisible, and they rewrite what a terminal or a log viewer shows.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** False when the string holds a lone UTF-16 surrogate, which no encoding can store (PostgreSQL writes U+FFFD). */
export function isWellFormedText(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/**
 * False when no database column can hold the string as sent: a NUL (PostgreSQL refuses it in text and jsonb) or a lone
 * surrogate (jsonb refuses it, text turns it into U+FFFD).
 */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && isWellFormedText(text);
}

/** True when the string holds a control character (C0, DEL, C1). */
export function hasControlCharacters(text: string): boolean {
  return CONTROL.test(text);
}
