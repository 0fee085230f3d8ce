// The Ethereum treasury key in a PKCS#11 token: secp256k1 ECDSA (CKM_ECDSA, one C_Sign over the 32-byte keccak
// digest we compute). The token returns r || s; Ethereum wants low s (EIP-2) and the recovery bit, which the token
// does not give: s is normalised, and the bit is the one whose recovered address is the treasury's.
import { numberToHex, recoverAddress, type Hex } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { SignerError, type EcdsaSignature, type EthereumSigner } from '../port.js';
import { pkcs11Library } from './module.js';
import { pointBytes, SECP256K1_PARAMS } from './objects.js';
import { openTokenSession, type TokenSessionOptions } from './session.js';

/** Order of the secp256k1 group. */
export const SECP256K1_N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const HALF_N = SECP256K1_N / 2n;
// Signed once at start-up: proves the private key is the public key's partner and the token does CKM_ECDSA.
const SELF_TEST_DIGEST = new Uint8Array(32).fill(0x5a);

export interface Pkcs11EthereumSignerOptions extends TokenSessionOptions {
  /** CKA_LABEL of the secp256k1 private key (and of its public key, or sharing its CKA_ID). */
  keyLabel: string;
  /** The variable naming the label (NAME_PKCS11_KEY_LABEL of the chain), for the errors an operator fixes. */
  setting?: string;
}

export async function openPkcs11EthereumSigner(options: Pkcs11EthereumSignerOptions): Promise<EthereumSigner> {
  const lib = pkcs11Library();
  const token = openTokenSession(options);
  const label = options.keyLabel;
  const setting = options.setting ?? 'ETHEREUM_PKCS11_KEY_LABEL';
  try {
    const facts = await token.keyFacts(label, setting);
    if (facts.keyType !== lib.CKK_EC || !facts.ecParams.equals(SECP256K1_PARAMS)) {
      throw new SignerError('key_unsupported', `the key "${label}" is not a secp256k1 EC key`, {
        setting,
        details: `key type ${facts.keyType}, EC parameters ${facts.ecParams.toString('hex')}`,
      });
    }
    const point = pointBytes(facts.ecPoint, 65);
    if (!point || point[0] !== 0x04) {
      throw new SignerError('key_unsupported', `the public point of "${label}" is not an uncompressed secp256k1 point`, {
        setting,
      });
    }
    if (!facts.confined) options.logger?.warn({ keyLabel: label }, 'the Ethereum key is extractable or not sensitive: it could leave the token');
    const address = publicKeyToAddress(`0x${point.toString('hex')}`);

    const signDigest = async (digest: Uint8Array): Promise<EcdsaSignature> => {
      if (digest.length !== 32) throw new TypeError(`expected a 32-byte digest, got ${digest.length} bytes`);
      const raw = await token.sign(label, setting, lib.CKM_ECDSA, Buffer.from(digest));
      return normalise(raw, toHex(digest), address);
    };
    await signDigest(SELF_TEST_DIGEST).catch((error: unknown) => {
      if (error instanceof SignerError && error.code === 'signature_invalid') {
        throw new SignerError('key_unsupported', `the private key "${label}" does not sign for its public key`, { setting });
      }
      throw error;
    });
    return Object.freeze({ kind: 'pkcs11' as const, address, signDigest, close: () => token.close() });
  } catch (error) {
    await token.close();
    throw error;
  }
}

/** r || s from the token -> low-s signature with the recovery bit that gives back `address`. */
async function normalise(raw: Buffer, hash: Hex, address: string): Promise<EcdsaSignature> {
  if (raw.length !== 64) throw new SignerError('signature_invalid', `expected a 64-byte r || s, got ${raw.length} bytes`);
  const r = BigInt(`0x${raw.subarray(0, 32).toString('hex')}`);
  let s = BigInt(`0x${raw.subarray(32).toString('hex')}`);
  if (r <= 0n || r >= SECP256K1_N || s <= 0n || s >= SECP256K1_N) {
    throw new SignerError('signature_invalid', 'r or s is outside the secp256k1 group order');
  }
  // (r, s) and (r, n - s) are both valid; Ethereum accepts only the lower one (EIP-2).
  if (s > HALF_N) s = SECP256K1_N - s;
  for (const yParity of [0, 1] as const) {
    const recovered = await recoverAddress({
      hash,
      signature: { r: numberToHex(r, { size: 32 }), s: numberToHex(s, { size: 32 }), yParity },
    });
    if (recovered === address) return { r, s, yParity };
  }
  throw new SignerError('signature_invalid', 'the signature recovers to neither parity of the treasury address');
}

function toHex(bytes: Uint8Array): Hex {
  return `0x${Buffer.from(bytes).toString('hex')}`;
}
