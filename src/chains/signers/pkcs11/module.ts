// One loaded and initialised PKCS#11 library per path and process. C_Initialize may run only once per process (a
// second one answers CKR_CRYPTOKI_ALREADY_INITIALIZED), and both treasury signers usually use the same library, so
// they share it: the last one to release it finalises it.
import { createRequire } from 'node:module';
import type * as Pkcs11Js from 'pkcs11js';
import { SignerError } from '../port.js';

export type Pkcs11Library = typeof Pkcs11Js;
export type Pkcs11 = Pkcs11Js.PKCS11;

export interface Pkcs11Module {
  readonly path: string;
  readonly pkcs11: Pkcs11;
  readonly lib: Pkcs11Library;
  /** Drops this user's reference; the library is finalised when none is left. Idempotent per reference. */
  release(): void;
}

const loaded = new Map<string, { pkcs11: Pkcs11; users: number }>();
let library: Pkcs11Library | undefined;

/** pkcs11js, a native addon, loaded only when a pkcs11 signer is configured, so key signers never need it built. */
export function pkcs11Library(): Pkcs11Library {
  if (library) return library;
  try {
    library = createRequire(import.meta.url)('pkcs11js') as Pkcs11Library;
  } catch (cause) {
    throw new SignerError('module_unavailable', 'the pkcs11js native addon is not built; run npm ci (package.json allowScripts lets it build)', {
      cause,
      details: (cause as Error).message,
    });
  }
  return library;
}

/** Whether this process has the library at `path` initialised (it read its configuration then, e.g. SOFTHSM2_CONF). */
export function moduleInUse(path: string): boolean {
  return loaded.has(path);
}

/** Loads and initialises the library at `path` (PKCS11_MODULE), or shares the one this process already has. */
export function acquireModule(path: string): Pkcs11Module {
  const lib = pkcs11Library();
  let entry = loaded.get(path);
  if (!entry) {
    const pkcs11 = new lib.PKCS11();
    try {
      pkcs11.load(path);
    } catch (cause) {
      throw new SignerError('module_unavailable', `cannot load the PKCS#11 library ${path}`, {
        setting: 'PKCS11_MODULE',
        details: (cause as Error).message,
        cause,
      });
    }
    try {
      // The library may be called from libuv's threads (C_SignAsync): let it lock with the OS's primitives.
      pkcs11.C_Initialize({ flags: lib.CKF_OS_LOCKING_OK });
    } catch (cause) {
      pkcs11.close();
      throw new SignerError('module_unavailable', `cannot initialise the PKCS#11 library ${path}`, {
        setting: 'PKCS11_MODULE',
        details: (cause as Error).message,
        cause,
      });
    }
    entry = { pkcs11, users: 0 };
    loaded.set(path, entry);
  }
  entry.users += 1;
  const held = entry;
  let released = false;
  return {
    path,
    pkcs11: held.pkcs11,
    lib,
    release() {
      if (released) return;
      released = true;
      held.users -= 1;
      if (held.users > 0) return;
      loaded.delete(path);
      try {
        held.pkcs11.C_Finalize();
      } finally {
        held.pkcs11.close();
      }
    },
  };
}
