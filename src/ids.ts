import { randomBytes } from 'node:crypto';

// Prefixed, opaque ids. 16 random bytes in lowercase base32-like alphabet: sortable prefix, unguessable rest.
export type IdPrefix = 'quo' | 'pi' | 'att' | 'mer' | 'evt' | 'key' | 'run' | 'alt' | 'ntf';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function newId(prefix: IdPrefix): string {
  const bytes = randomBytes(16);
  let out = '';
  for (const byte of bytes) out += ALPHABET[byte & 31];
  return `${prefix}_${out}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && /^[a-z]+_[0-9a-z]{1,64}$/.test(id);
}
