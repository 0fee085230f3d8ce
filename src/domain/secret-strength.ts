// A floor under the secrets production depends on (API_KEY_SALT, WEBHOOK_SIGNING_SECRET, ADMIN_TOKEN, AUDIT_KEY). Pure.
//
// A heuristic, not a proof: it refuses what is plainly guessable (short strings, one character repeated, a short
// pattern repeated, text with few distinct characters) and accepts every secret a generator prints
// (`openssl rand -hex 16` and longer, `openssl rand -base64 24`, `stableroute webhooks secret`).

export const SECRET_MIN_CHARS = 32;
/** Length x the Shannon entropy of the string's own character distribution. `openssl rand -hex 16` scores ~118 (rarely below 95). */
export const SECRET_MIN_ESTIMATED_BITS = 80;
export const SECRET_MIN_DISTINCT_CHARS = 8;

/** Bits estimated from the character frequencies of the string itself (an upper bound on what it can hold). */
export function estimatedEntropyBits(secret: string): number {
  const chars = [...secret];
  const counts = new Map<string, number>();
  for (const c of chars) counts.set(c, (counts.get(c) ?? 0) + 1);
  let perChar = 0;
  for (const n of counts.values()) {
    const p = n / chars.length;
    perChar -= p * Math.log2(p);
  }
  return perChar * chars.length;
}

/** Why a production secret is too weak (never quoting it), or null. */
export function weakSecretProblem(secret: string): string | null {
  const chars = [...secret];
  if (chars.length < SECRET_MIN_CHARS) {
    return `is too short (${chars.length} characters; at least ${SECRET_MIN_CHARS} of random text, e.g. \`openssl rand -hex 32\`)`;
  }
  if (/^(.+?)\1+$/su.test(secret)) return 'is a short pattern repeated; use random text, e.g. `openssl rand -hex 32`';
  if (new Set(chars).size < SECRET_MIN_DISTINCT_CHARS || estimatedEntropyBits(secret) < SECRET_MIN_ESTIMATED_BITS) {
    return 'looks guessable (too few distinct characters for its length); use random text, e.g. `openssl rand -hex 32`';
  }
  return null;
}
