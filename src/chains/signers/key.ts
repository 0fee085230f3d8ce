// The `key` signers: the treasury's private key held in this process (from *_TREASURY_KEY or *_TREASURY_KEY_FILE).
// The key lives only in a closure (Ethereum: viem's account; Solana: a node:crypto KeyObject), never in a property,
// so no serialisation, inspection or log of a signer can show it. Errors describe the input's shape, never its content.
import { sign } from 'node:crypto';
import { parseSignature, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { parseSolanaPrivateKey } from '../solana/keys.js';
import { SignerError, type EthereumSigner, type SolanaSigner } from './port.js';

/** From a 32-byte hex private key, with or without 0x. Throws TypeError naming `treasuryKey`, never the value. */
export function createEthereumKeySigner(key: string): EthereumSigner {
  const hex = key.startsWith('0x') ? key : `0x${key}`;
  if (!/^0x[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError('treasuryKey must be a 32-byte hex private key');
  let account: ReturnType<typeof privateKeyToAccount>;
  try {
    account = privateKeyToAccount(hex as Hex);
  } catch {
    throw new TypeError('treasuryKey is not a valid secp256k1 private key');
  }
  let closed = false;
  return Object.freeze({
    kind: 'key' as const,
    address: account.address,
    async signDigest(digest: Uint8Array) {
      if (closed) throw new SignerError('closed', 'the Ethereum signer is closed');
      if (digest.length !== 32) throw new TypeError(`expected a 32-byte digest, got ${digest.length} bytes`);
      // viem signs with low s (RFC 6979, noble) and reports the recovery bit.
      const { r, s, yParity } = parseSignature(await account.sign({ hash: toHex(digest) }));
      return { r: BigInt(r), s: BigInt(s), yParity: yParity === 1 ? (1 as const) : (0 as const) };
    },
    async close() {
      closed = true;
    },
  });
}

/** From a base58 64-byte secret key or a solana-keygen JSON array. Throws InvalidSecretKeyError (solana/keys.ts). */
export function createSolanaKeySigner(text: string): SolanaSigner {
  const { address, privateKey } = parseSolanaPrivateKey(text);
  let closed = false;
  return Object.freeze({
    kind: 'key' as const,
    address,
    async signMessage(message: Uint8Array) {
      if (closed) throw new SignerError('closed', 'the Solana signer is closed');
      return new Uint8Array(sign(null, message, privateKey));
    },
    async close() {
      closed = true;
    },
  });
}

function toHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}
