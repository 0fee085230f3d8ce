// The treasury secret key, parsed once at start-up into an opaque signer. The raw bytes never outlive parsing: the
// private half lives in a node:crypto KeyObject (which prints as nothing), and every error message describes the
// shape of the input, never its content.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import {
  getBase58Decoder,
  getBase58Encoder,
  type Address,
  type SignatureBytes,
  type TransactionPartialSigner,
} from '@solana/kit';
import { SolanaConfigError } from './errors.js';

/** A treasury key that cannot be used. The message describes the input's shape, never its content. */
export class InvalidSecretKeyError extends SolanaConfigError {
  override readonly name: string = 'InvalidSecretKeyError';
  constructor(details: string) {
    super('treasuryKey', 'invalid Solana secret key', details);
  }
}

export interface SolanaKey {
  readonly address: Address;
  /** Signs transaction messages with the private key; it cannot reveal the key. */
  readonly signer: TransactionPartialSigner;
}

const SECRET_KEY_BYTES = 64;
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;
// PKCS#8 wrapping of a raw 32-byte Ed25519 seed (RFC 8410), so node:crypto can import it.
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/**
 * Parses a 64-byte Solana secret key (32-byte seed followed by the 32-byte public key), given either as base58
 * (Phantom-style export) or as a JSON array of 64 numbers (solana-keygen file content). Checks that the public half
 * belongs to the private half, so a truncated or mixed-up key fails at start-up rather than at the first payout.
 */
export function parseSolanaSecretKey(text: string): SolanaKey {
  const { address, privateKey } = parseSolanaPrivateKey(text);
  return { address, signer: signerFor(address, privateKey) };
}

/** The same parse and checks, giving the private half as a KeyObject (src/chains/signers/key.ts signs with it). */
export function parseSolanaPrivateKey(text: string): { address: Address; privateKey: KeyObject } {
  const bytes = secretKeyBytes(text.trim());
  try {
    const der = Buffer.concat([PKCS8_ED25519_PREFIX, bytes.subarray(0, 32)]);
    let privateKey: KeyObject;
    try {
      privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
    } finally {
      der.fill(0);
    }
    const derivedPublic = Buffer.from(jwkField(createPublicKey(privateKey), 'x'), 'base64url');
    if (!derivedPublic.equals(bytes.subarray(32))) {
      throw new InvalidSecretKeyError('the last 32 bytes are not the public key of the first 32 bytes');
    }
    const address = getBase58Decoder().decode(derivedPublic) as Address;
    return { address, privateKey };
  } finally {
    bytes.fill(0);
  }
}

/** A fresh key pair as a base58 64-byte secret key, the format parseSolanaSecretKey reads (used by the devnet). */
export function generateSolanaSecretKey(): { secretKey: string; address: Address } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(jwkField(privateKey, 'd'), 'base64url');
  const pub = Buffer.from(jwkField(publicKey, 'x'), 'base64url');
  const secret = Buffer.concat([seed, pub]);
  const secretKey = getBase58Decoder().decode(secret);
  seed.fill(0);
  secret.fill(0);
  return { secretKey, address: getBase58Decoder().decode(pub) as Address };
}

function secretKeyBytes(text: string): Buffer {
  if (text === '') throw new InvalidSecretKeyError('the key is empty');
  let bytes: Buffer;
  if (text.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new InvalidSecretKeyError('starts with "[" but is not a JSON array');
    }
    const valid =
      Array.isArray(parsed) && parsed.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 255);
    if (!valid) throw new InvalidSecretKeyError('expected a JSON array of numbers from 0 to 255');
    bytes = Buffer.from(parsed as number[]);
    (parsed as number[]).fill(0);
  } else {
    if (!BASE58.test(text)) {
      throw new InvalidSecretKeyError('expected base58 text or a JSON array of 64 numbers');
    }
    const decoded = getBase58Encoder().encode(text);
    bytes = Buffer.from(decoded);
    (decoded as Uint8Array).fill(0);
  }
  if (bytes.length !== SECRET_KEY_BYTES) {
    const length = bytes.length;
    bytes.fill(0);
    throw new InvalidSecretKeyError(`expected ${SECRET_KEY_BYTES} bytes, got ${length}`);
  }
  return bytes;
}

function jwkField(key: KeyObject, field: 'd' | 'x'): string {
  const value = key.export({ format: 'jwk' })[field];
  if (typeof value !== 'string') throw new InvalidSecretKeyError('could not read the Ed25519 key');
  return value;
}

function signerFor(address: Address, privateKey: KeyObject): TransactionPartialSigner {
  return Object.freeze({
    address,
    signTransactions: (transactions) =>
      Promise.resolve(
        transactions.map((transaction) => {
          const signature = sign(null, new Uint8Array(transaction.messageBytes), privateKey);
          return Object.freeze({ [address]: new Uint8Array(signature) as SignatureBytes });
        }),
      ),
  });
}
