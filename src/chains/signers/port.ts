// The signer port: the one thing an adapter needs from custody. A signer knows its treasury address and signs what
// the adapter hands it; it never hands out key material. Two implementations: `key` (a private key held in this
// process, from the environment or a mounted file) and `pkcs11` (the key lives in a PKCS#11 token and never leaves
// it). A KMS signer would be a third implementation of the same two interfaces.
import type { Address as EthereumAddress } from 'viem';
import type { SignerKind } from '../../config.js';

export type { SignerKind };

/** An ECDSA signature over secp256k1, low-s normalised, with the recovery bit Ethereum needs. */
export interface EcdsaSignature {
  r: bigint;
  s: bigint;
  yParity: 0 | 1;
}

export interface EthereumSigner {
  readonly kind: SignerKind;
  /** Checksummed address of the treasury. */
  readonly address: EthereumAddress;
  /** Signs a 32-byte digest (we compute the keccak hash; the signer never sees the transaction). */
  signDigest(digest: Uint8Array): Promise<EcdsaSignature>;
  /** Releases the session or handle; later calls fail with SignerError `closed`. Idempotent. */
  close(): Promise<void>;
}

export interface SolanaSigner {
  readonly kind: SignerKind;
  /** Base58 public key of the treasury. */
  readonly address: string;
  /** Ed25519 signature (64 bytes) over the message bytes as they are, no pre-hashing. */
  signMessage(message: Uint8Array): Promise<Uint8Array>;
  close(): Promise<void>;
}

/**
 * Stable signer error codes (docs/errors.md, "Signer errors"); never renamed. Branch on `code`, never on the message.
 * Set-up problems carry `setting`, the variable to fix; messages never contain a key or a PIN.
 */
export const SIGNER_ERROR_CODES = [
  'module_unavailable', // the PKCS#11 library cannot be loaded or initialised
  'token_not_found', // no single token carries the configured label
  'pin_incorrect', // the token refused the PIN (or it is locked)
  'key_not_found', // no single private key (with its public key) carries the configured label
  'key_unsupported', // the key is not secp256k1 (Ethereum) or Ed25519 (Solana), or its public point is unreadable
  'device_error', // the token failed an operation, also after one re-opened session
  'timeout', // the token did not sign within PKCS11_TIMEOUT_SECONDS
  'signature_invalid', // the token returned a signature that does not verify against the treasury's public key
  'closed', // the signer was closed
] as const;
export type SignerErrorCode = (typeof SIGNER_ERROR_CODES)[number];

export class SignerError extends Error {
  override readonly name = 'SignerError';
  readonly shortMessage: string;
  readonly details: string | undefined;
  /** The setting an operator has to change, for errors found at start-up. */
  readonly setting: string | undefined;
  constructor(
    readonly code: SignerErrorCode,
    shortMessage: string,
    options: { details?: string; setting?: string; cause?: unknown } = {},
  ) {
    const prefix = options.setting ? `${options.setting}: ` : '';
    super(`${prefix}${shortMessage}${options.details ? `\n\nDetails: ${options.details}` : ''}`, { cause: options.cause });
    this.shortMessage = shortMessage;
    this.details = options.details;
    this.setting = options.setting;
  }
}
