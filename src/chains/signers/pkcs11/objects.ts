// Reading a PKCS#11 token: slots by token label, key pairs by CKA_LABEL, and the curve facts we check before trusting
// a key. Every lookup wants exactly one match: two tokens or two keys with one label are refused, never guessed.
import { endianness } from 'node:os';
import type { Pkcs11Library, Pkcs11 } from './module.js';
import { SignerError } from '../port.js';

type Handle = Buffer;

// PKCS#11 3.0 names that pkcs11js 2.1.7 does not export.
export const CKK_EC_EDWARDS = 0x40;
export const CKM_EC_EDWARDS_KEY_PAIR_GEN = 0x1055;
export const CKM_EDDSA = 0x1057;

/** DER of the named curves, as CKA_EC_PARAMS carries them. */
export const SECP256K1_PARAMS = Buffer.from('06052b8104000a', 'hex'); // OID 1.3.132.0.10
export const ED25519_OID_PARAMS = Buffer.from('06032b6570', 'hex'); // OID 1.3.101.112
/** PrintableString "edwards25519": the PKCS#11 3.0 spelling some tokens use instead of the OID. */
export const ED25519_NAME_PARAMS = Buffer.from('130c656477617264733235353139', 'hex');

/** A token label as tokens store it (32 bytes, space padded); pkcs11js would pad with NULs instead. */
export function paddedLabel(label: string): string {
  return label.padEnd(32, ' ');
}

/** Labels come back padded with spaces (or NULs, from some tools). */
export function trimLabel(label: string): string {
  return label.replace(/[\s\0]+$/, '');
}

/** The one slot whose token carries `label`. */
export function findTokenSlot(pkcs11: Pkcs11, label: string, modulePath: string): Handle {
  const slots = pkcs11.C_GetSlotList(true);
  const labels = slots.map((slot) => trimLabel(pkcs11.C_GetTokenInfo(slot).label));
  const matches = slots.filter((_, i) => labels[i] === label);
  if (matches.length !== 1) {
    const seen = labels.filter((l) => l !== '').map((l) => JSON.stringify(l));
    throw new SignerError(
      'token_not_found',
      matches.length === 0 ? `no token labelled "${label}" in ${modulePath}` : `${matches.length} tokens are labelled "${label}"`,
      { setting: 'PKCS11_TOKEN_LABEL', details: `tokens present: ${seen.join(', ') || 'none'}` },
    );
  }
  return matches[0]!;
}

function findObjects(pkcs11: Pkcs11, session: Handle, template: { type: number; value: number | string | Buffer }[]): Handle[] {
  pkcs11.C_FindObjectsInit(session, template);
  try {
    return pkcs11.C_FindObjects(session, 2); // two are enough to tell "one" from "ambiguous"
  } finally {
    pkcs11.C_FindObjectsFinal(session);
  }
}

/** The private key labelled `label`; `setting` names the variable that holds the label. */
export function findPrivateKey(lib: Pkcs11Library, pkcs11: Pkcs11, session: Handle, label: string, setting: string): Handle {
  const found = findObjects(pkcs11, session, [
    { type: lib.CKA_CLASS, value: lib.CKO_PRIVATE_KEY },
    { type: lib.CKA_LABEL, value: label },
  ]);
  if (found.length !== 1) {
    const why = found.length === 0 ? `no private key labelled "${label}" on the token` : `several private keys are labelled "${label}"`;
    throw new SignerError('key_not_found', why, { setting });
  }
  return found[0]!;
}

export interface KeyFacts {
  keyType: number;
  ecParams: Buffer;
  /** CKA_EC_POINT of the public key, as the token returns it (DER OCTET STRING or raw). */
  ecPoint: Buffer;
  /** false when the private key could leave the token (CKA_SENSITIVE false or CKA_EXTRACTABLE true). */
  confined: boolean;
}

/** What we check before signing with a key: its type, curve and public point, read from its public key object. */
export function readKeyFacts(lib: Pkcs11Library, pkcs11: Pkcs11, session: Handle, label: string, setting: string): KeyFacts {
  const privateKey = findPrivateKey(lib, pkcs11, session, label, setting);
  const [sensitive, extractable, id] = pkcs11.C_GetAttributeValue(session, privateKey, [
    { type: lib.CKA_SENSITIVE },
    { type: lib.CKA_EXTRACTABLE },
    { type: lib.CKA_ID },
  ]);
  // The public key sits next to the private one under the same label, or (common on real HSMs) the same CKA_ID.
  let publicKeys = findObjects(pkcs11, session, [
    { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
    { type: lib.CKA_LABEL, value: label },
  ]);
  if (publicKeys.length === 0 && id?.value && id.value.length > 0) {
    publicKeys = findObjects(pkcs11, session, [
      { type: lib.CKA_CLASS, value: lib.CKO_PUBLIC_KEY },
      { type: lib.CKA_ID, value: id.value },
    ]);
  }
  if (publicKeys.length !== 1) {
    throw new SignerError('key_not_found', `no single public key goes with the private key "${label}" (same label or CKA_ID)`, {
      setting,
    });
  }
  const [keyType, ecParams, ecPoint] = pkcs11.C_GetAttributeValue(session, publicKeys[0]!, [
    { type: lib.CKA_KEY_TYPE },
    { type: lib.CKA_EC_PARAMS },
    { type: lib.CKA_EC_POINT },
  ]);
  if (!keyType?.value || !ecParams?.value || !ecPoint?.value) {
    throw new SignerError('key_unsupported', `the public key "${label}" has no EC parameters or point`, { setting });
  }
  return {
    keyType: unsigned(keyType.value),
    ecParams: ecParams.value,
    ecPoint: ecPoint.value,
    confined: sensitive?.value?.[0] === 1 && extractable?.value?.[0] !== 1,
  };
}

/**
 * The public point's bytes: PKCS#11 says CKA_EC_POINT is a DER OCTET STRING, some tokens return the bare point.
 * `length` is what the curve needs (65 for an uncompressed secp256k1 point, 32 for Ed25519).
 */
export function pointBytes(ecPoint: Buffer, length: number): Buffer | null {
  if (ecPoint.length === length) return ecPoint;
  // Short-form DER length (< 128), which covers both curves.
  if (ecPoint.length === length + 2 && ecPoint[0] === 0x04 && ecPoint[1] === length) return ecPoint.subarray(2);
  return null;
}

/** CK_ULONG attributes come back in the platform's byte order and width (8 bytes on 64-bit Linux). */
function unsigned(value: Buffer): number {
  const width = Math.min(value.length, 6); // key types and the like are small; 6 bytes is what Buffer reads at once
  return endianness() === 'LE' ? value.readUIntLE(0, width) : value.readUIntBE(value.length - width, width);
}
