// Solana addresses are checked with bs58 (decision 142); the rule must stay exactly `@solana/kit`'s isAddress,
// minus the System Program.
import { randomBytes } from 'node:crypto';
import { getBase58Decoder, isAddress } from '@solana/kit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWellFormedSolanaAddress, SOLANA_SYSTEM_PROGRAM } from '../../src/domain/addresses.js';

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const base58 = (bytes: Uint8Array) => getBase58Decoder().decode(bytes);
const agrees = (candidate: string) => expect(isWellFormedSolanaAddress(candidate)).toBe(isAddress(candidate) && candidate !== SOLANA_SYSTEM_PROGRAM);

describe('isWellFormedSolanaAddress', () => {
  it('accepts every 32-byte key, with or without leading zero bytes, and refuses the System Program', () => {
    for (let i = 0; i < 500; i++) expect(isWellFormedSolanaAddress(base58(randomBytes(32)))).toBe(true);
    const leadingZeros = new Uint8Array(32);
    leadingZeros.set(randomBytes(20), 12);
    expect(isWellFormedSolanaAddress(base58(leadingZeros))).toBe(true);
    expect(isWellFormedSolanaAddress(SOLANA_SYSTEM_PROGRAM)).toBe(false);
  });

  it("refuses what @solana/kit refuses: other lengths, characters outside base58, 31 or 33 bytes", () => {
    for (const n of [31, 33, 16, 64]) agrees(base58(randomBytes(n)));
    for (const bad of ['', '0OIl'.repeat(10), `${base58(randomBytes(32)).slice(0, -1)}0`, ` ${base58(randomBytes(32))}`, 'x'.repeat(45)]) {
      expect(isWellFormedSolanaAddress(bad)).toBe(false);
      agrees(bad);
    }
  });

  it('agrees with @solana/kit on arbitrary strings over the base58 alphabet and near it', () => {
    const chars = fc.constantFrom(...`${ALPHABET}0OIl+/ `.split(''));
    fc.assert(fc.property(fc.string({ unit: chars, minLength: 28, maxLength: 48 }), (candidate) => {
      agrees(candidate);
    }), { numRuns: 3000 });
    fc.assert(fc.property(fc.uint8Array({ minLength: 28, maxLength: 36 }), (bytes) => {
      agrees(base58(bytes));
    }), { numRuns: 3000 });
  });
});
