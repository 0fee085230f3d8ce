// The Solana treasury key in a PKCS#11 token: Ed25519 with CKM_EDDSA over the message bytes (pure EdDSA, no
// pre-hash). Every signature is verified against the treasury's public key before it is used: a wrong signature
// would only be refused by the node, after the payout's blockhash was spent.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { SignerError, type SolanaSigner } from '../port.js';
import { CKK_EC_EDWARDS, CKM_EDDSA, ED25519_NAME_PARAMS, ED25519_OID_PARAMS, pointBytes } from './objects.js';
import { openTokenSession, type TokenSessionOptions } from './session.js';

const SETTING = 'SOLANA_PKCS11_KEY_LABEL';
const SELF_TEST_MESSAGE = Buffer.from('stableroute pkcs11 self-test');

export interface Pkcs11SolanaSignerOptions extends TokenSessionOptions {
  /** CKA_LABEL of the Ed25519 private key (and of its public key, or sharing its CKA_ID). */
  keyLabel: string;
}

export async function openPkcs11SolanaSigner(options: Pkcs11SolanaSignerOptions): Promise<SolanaSigner> {
  const token = openTokenSession(options);
  const label = options.keyLabel;
  try {
    const facts = await token.keyFacts(label, SETTING);
    const ed25519 = facts.ecParams.equals(ED25519_OID_PARAMS) || facts.ecParams.equals(ED25519_NAME_PARAMS);
    if (facts.keyType !== CKK_EC_EDWARDS || !ed25519) {
      throw new SignerError('key_unsupported', `the key "${label}" is not an Ed25519 key`, {
        setting: SETTING,
        details: `key type ${facts.keyType}, EC parameters ${facts.ecParams.toString('hex')}`,
      });
    }
    const point = pointBytes(facts.ecPoint, 32);
    if (!point) throw new SignerError('key_unsupported', `the public point of "${label}" is not 32 bytes`, { setting: SETTING });
    if (!facts.confined) options.logger?.warn({ keyLabel: label }, 'the Solana key is extractable or not sensitive: it could leave the token');
    const address = getBase58Decoder().decode(point);
    const publicKey: KeyObject = createPublicKey({
      key: { kty: 'OKP', crv: 'Ed25519', x: point.toString('base64url') },
      format: 'jwk',
    });

    const signMessage = async (message: Uint8Array): Promise<Uint8Array> => {
      const signature = await token.sign(label, SETTING, CKM_EDDSA, Buffer.from(message));
      if (signature.length !== 64 || !verify(null, message, publicKey, signature)) {
        throw new SignerError('signature_invalid', 'the token returned a signature that does not verify for the treasury');
      }
      return new Uint8Array(signature);
    };
    await signMessage(SELF_TEST_MESSAGE).catch((error: unknown) => {
      if (error instanceof SignerError && error.code === 'signature_invalid') {
        throw new SignerError('key_unsupported', `the private key "${label}" does not sign for its public key`, { setting: SETTING });
      }
      throw error;
    });
    return Object.freeze({ kind: 'pkcs11' as const, address, signMessage, close: () => token.close() });
  } catch (error) {
    await token.close();
    throw error;
  }
}
