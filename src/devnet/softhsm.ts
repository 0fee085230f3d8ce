// `stableroute devnet --signer pkcs11`: a fresh SoftHSM2 token holding both treasury keys, generated inside it
// (CKA_SENSITIVE, not extractable), so the service pays out with keys nobody ever sees, the devnet included. The
// token lives in its own directory with its own SOFTHSM2_CONF; the user PIN is random and written to a 0600 file.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve, join } from 'node:path';
import { getBase58Decoder } from '@solana/kit';
import type { Address } from 'viem';
import { publicKeyToAddress } from 'viem/accounts';
import { acquireModule, moduleInUse } from '../chains/signers/pkcs11/module.js';
import {
  CKM_EC_EDWARDS_KEY_PAIR_GEN,
  ED25519_OID_PARAMS,
  findTokenSlot,
  paddedLabel,
  pointBytes,
  readKeyFacts,
  SECP256K1_PARAMS,
} from '../chains/signers/pkcs11/objects.js';
import { DevnetError } from './ethereum.js';

/** Where distributions put SoftHSM2's PKCS#11 library (Debian/Ubuntu first: apt-get install softhsm2). */
const MODULE_CANDIDATES = [
  '/usr/lib/softhsm/libsofthsm2.so',
  `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu/softhsm/libsofthsm2.so`,
  '/usr/lib64/pkcs11/libsofthsm2.so',
  '/usr/lib/pkcs11/libsofthsm2.so',
  '/usr/local/lib/softhsm/libsofthsm2.so',
  '/opt/homebrew/lib/softhsm/libsofthsm2.so',
];

export const DEVNET_TOKEN_LABEL = 'stableroute-devnet';
export const DEVNET_ETHEREUM_KEY_LABEL = 'ethereum-treasury';
export const DEVNET_SOLANA_KEY_LABEL = 'solana-treasury';

export interface SoftHsmToken {
  /** PKCS11_MODULE */
  module: string;
  /** PKCS11_TOKEN_LABEL */
  tokenLabel: string;
  /** PKCS11_PIN_FILE (mode 0600) */
  pinFile: string;
  /** SOFTHSM2_CONF: SoftHSM reads its token directory from here; a service using the token needs it too. */
  conf: string;
  ethereumKeyLabel: string;
  solanaKeyLabel: string;
  ethereumAddress: Address;
  solanaAddress: string;
}

/** SoftHSM2's library, or a DevnetError that says how to install it. */
export function softHsmModulePath(): string {
  const found = MODULE_CANDIDATES.find((path) => existsSync(path));
  if (!found) {
    throw new DevnetError(
      `SoftHSM2 is not installed (no libsofthsm2.so in ${MODULE_CANDIDATES.join(', ')}). ` +
        'On Debian or Ubuntu: apt-get install -y softhsm2',
    );
  }
  return found;
}

/**
 * Creates the token under `dir` and both key pairs in it. Sets this process's SOFTHSM2_CONF to the new
 * configuration, since SoftHSM reads it when the library is initialised; refuses if this process already has
 * SoftHSM initialised with another one.
 */
export async function createSoftHsmToken(dir: string): Promise<SoftHsmToken> {
  const module = softHsmModulePath();
  if (moduleInUse(module)) throw new DevnetError('SoftHSM is already initialised in this process with another configuration');
  const root = resolve(dir);
  const tokens = join(root, 'tokens');
  await mkdir(tokens, { recursive: true, mode: 0o700 });
  const conf = join(root, 'softhsm2.conf');
  await writeFile(
    conf,
    `directories.tokendir = ${tokens}\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n`,
    { mode: 0o600 },
  );
  // Random PINs: the user PIN goes to a file only the service reads; the SO PIN is forgotten (nobody re-initialises
  // a devnet token, it is thrown away with the run).
  const pin = randomBytes(16).toString('hex');
  const soPin = randomBytes(16).toString('hex');
  const pinFile = join(root, 'user.pin');
  await writeFile(pinFile, `${pin}\n`, { mode: 0o600 });
  process.env.SOFTHSM2_CONF = conf;

  const held = acquireModule(module);
  const { pkcs11, lib } = held;
  try {
    const free = pkcs11.C_GetSlotList(true).find((slot) => (pkcs11.C_GetTokenInfo(slot).flags & lib.CKF_TOKEN_INITIALIZED) === 0);
    if (!free) throw new DevnetError(`SoftHSM offers no free slot in ${tokens}`);
    pkcs11.C_InitToken(free, soPin, paddedLabel(DEVNET_TOKEN_LABEL));
    // SoftHSM gives an initialised token a new slot id: find it again by its label.
    const slot = findTokenSlot(pkcs11, DEVNET_TOKEN_LABEL, module);
    const session = pkcs11.C_OpenSession(slot, lib.CKF_SERIAL_SESSION | lib.CKF_RW_SESSION);
    try {
      pkcs11.C_Login(session, lib.CKU_SO, soPin);
      pkcs11.C_InitPIN(session, pin);
      pkcs11.C_Logout(session);
      pkcs11.C_Login(session, lib.CKU_USER, pin);
      generatePair(held, session, lib.CKM_EC_KEY_PAIR_GEN, SECP256K1_PARAMS, DEVNET_ETHEREUM_KEY_LABEL);
      generatePair(held, session, CKM_EC_EDWARDS_KEY_PAIR_GEN, ED25519_OID_PARAMS, DEVNET_SOLANA_KEY_LABEL);
      const ethereumPoint = pointBytes(readKeyFacts(lib, pkcs11, session, DEVNET_ETHEREUM_KEY_LABEL, 'devnet').ecPoint, 65);
      const solanaPoint = pointBytes(readKeyFacts(lib, pkcs11, session, DEVNET_SOLANA_KEY_LABEL, 'devnet').ecPoint, 32);
      if (!ethereumPoint || !solanaPoint) throw new DevnetError('SoftHSM returned public points of an unexpected size');
      return {
        module,
        tokenLabel: DEVNET_TOKEN_LABEL,
        pinFile,
        conf,
        ethereumKeyLabel: DEVNET_ETHEREUM_KEY_LABEL,
        solanaKeyLabel: DEVNET_SOLANA_KEY_LABEL,
        ethereumAddress: publicKeyToAddress(`0x${ethereumPoint.toString('hex')}`),
        solanaAddress: getBase58Decoder().decode(solanaPoint),
      };
    } finally {
      pkcs11.C_CloseSession(session); // the last session: logs out
    }
  } finally {
    held.release();
  }
}

function generatePair(
  { pkcs11, lib }: ReturnType<typeof acquireModule>,
  session: Buffer,
  mechanism: number,
  curve: Buffer,
  label: string,
): void {
  const id = randomBytes(8);
  pkcs11.C_GenerateKeyPair(
    session,
    { mechanism },
    [
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_PRIVATE, value: false },
      { type: lib.CKA_VERIFY, value: true },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: id },
      { type: lib.CKA_EC_PARAMS, value: curve },
    ],
    [
      { type: lib.CKA_TOKEN, value: true },
      { type: lib.CKA_PRIVATE, value: true },
      { type: lib.CKA_SIGN, value: true },
      // The key never leaves the token, not even wrapped.
      { type: lib.CKA_SENSITIVE, value: true },
      { type: lib.CKA_EXTRACTABLE, value: false },
      { type: lib.CKA_LABEL, value: label },
      { type: lib.CKA_ID, value: id },
    ],
  );
}
