import { randomBytes } from 'node:crypto';

// Prefixed, opaque ids. 16 random bytes in lowercase base32-like alphabet: sortable prefix, unguessable rest.
export type IdPrefix = 'quo' | 'pi' | 'att' | 'mer' | 'evt' | 'key' | 'run' | 'alt' | 'ntf' | 'op' | 'pob' | 'scr' | 'sov' | 'ff' | 'hld';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

// Random bytes are drawn from the system's CSPRNG 4 KiB at a time: one call per 256 ids instead of one per id (a
// quote or a payment takes several). Each byte is used once.
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

export function newId(prefix: IdPrefix): string {
  if (offset + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  let out = '';
  for (let i = offset; i < offset + 16; i++) out += ALPHABET[pool[i]! & 31];
  offset += 16;
  return `${prefix}_${out}`;
}

export function hasPrefix(id: string, prefix: IdPrefix): boolean {
  return id.startsWith(`${prefix}_`) && /^[a-z]+_[0-9a-z]{1,64}$/.test(id);
}
