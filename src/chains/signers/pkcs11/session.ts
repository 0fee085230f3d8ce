// One logged-in session on one PKCS#11 token, shared by the calls of one signer and used one call at a time
// (payout signing is a few signatures a second at most; a pool would only add states). A session the token lost
// (CKR_SESSION_HANDLE_INVALID, a device error, a reset token) is dropped and opened afresh once per call. Every
// signature has a deadline, queue wait included: the Ethereum adapter signs while it holds the nonce row lock.
import type { Logger } from 'pino';
import { SignerError } from '../port.js';
import { acquireModule, type Pkcs11Module } from './module.js';
import { findPrivateKey, findTokenSlot, readKeyFacts, type KeyFacts } from './objects.js';

type Handle = Buffer;

export interface TokenSessionOptions {
  /** PKCS11_MODULE: path of the PKCS#11 library. */
  modulePath: string;
  /** PKCS11_TOKEN_LABEL. */
  tokenLabel: string;
  /** The user PIN (read from PKCS11_PIN_FILE by config); kept in a closure, never in a property. */
  pin: string;
  /** PKCS11_TIMEOUT_SECONDS: bounds each signature, queue wait included. */
  timeoutSeconds: number;
  logger?: Pick<Logger, 'warn'>;
}

// ECDSA over a 256-bit curve and Ed25519 both give 64 bytes; the buffer only has to be large enough.
const SIGNATURE_BUFFER_BYTES = 512;

export interface TokenSession {
  /** Checks a key once at start-up: type, curve, public point. */
  keyFacts(label: string, setting: string): Promise<KeyFacts>;
  /** Signs `data` with the private key labelled `label`, using `mechanism` (CKM_ECDSA, CKM_EDDSA). */
  sign(label: string, setting: string, mechanism: number, data: Buffer): Promise<Buffer>;
  close(): Promise<void>;
}

export function openTokenSession(options: TokenSessionOptions): TokenSession {
  const { tokenLabel, timeoutSeconds, logger } = options;
  const pin = options.pin;
  const timeoutMs = Math.max(1, Math.round(timeoutSeconds * 1000));
  const module: Pkcs11Module = acquireModule(options.modulePath);
  const { pkcs11, lib } = module;
  let session: Handle | null = null;
  // Object handles are only good for the session generation that found them.
  let keys = new Map<string, Handle>();
  let closed = false;
  let tail: Promise<unknown> = Promise.resolve();

  function openSession(): Handle {
    const slot = findTokenSlot(pkcs11, tokenLabel, options.modulePath);
    const opened = pkcs11.C_OpenSession(slot, lib.CKF_SERIAL_SESSION);
    try {
      pkcs11.C_Login(opened, lib.CKU_USER, pin);
    } catch (error) {
      // Login is per application and token: a second session (the other chain's signer) finds it done.
      if (codeOf(error) !== lib.CKR_USER_ALREADY_LOGGED_IN) {
        closeQuietly(opened);
        const code = codeOf(error);
        if (code === lib.CKR_PIN_INCORRECT || code === lib.CKR_PIN_LOCKED || code === lib.CKR_PIN_INVALID || code === lib.CKR_PIN_LEN_RANGE) {
          throw new SignerError('pin_incorrect', `the token "${tokenLabel}" refused the PIN`, {
            setting: 'PKCS11_PIN_FILE',
            details: nameOf(error),
          });
        }
        throw deviceError(`logging in to the token "${tokenLabel}"`, error);
      }
    }
    return opened;
  }

  function current(): Handle {
    if (closed) throw new SignerError('closed', 'the PKCS#11 signer is closed');
    session ??= openSession();
    return session;
  }

  function drop(): void {
    if (session) closeQuietly(session);
    session = null;
    keys = new Map();
  }

  function closeQuietly(handle: Handle): void {
    try {
      // Never C_Logout: it would log out the other signer's sessions too. Closing the last session logs out.
      pkcs11.C_CloseSession(handle);
    } catch {
      // already gone with the device or the token
    }
  }

  /** One call at a time, in order; a failed call does not stop the ones behind it. */
  function serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  }

  function recoverable(error: unknown): boolean {
    return [
      lib.CKR_SESSION_HANDLE_INVALID,
      lib.CKR_SESSION_CLOSED,
      lib.CKR_USER_NOT_LOGGED_IN,
      lib.CKR_OBJECT_HANDLE_INVALID,
      lib.CKR_KEY_HANDLE_INVALID,
      lib.CKR_OPERATION_ACTIVE,
      lib.CKR_DEVICE_ERROR,
      lib.CKR_DEVICE_REMOVED,
      lib.CKR_TOKEN_NOT_PRESENT,
      lib.CKR_TOKEN_NOT_RECOGNIZED,
      lib.CKR_GENERAL_ERROR,
    ].includes(codeOf(error) ?? -1);
  }

  function privateKey(handle: Handle, label: string, setting: string): Handle {
    let key = keys.get(label);
    if (!key) {
      key = findPrivateKey(lib, pkcs11, handle, label, setting);
      keys.set(label, key);
    }
    return key;
  }

  async function signNow(label: string, setting: string, mechanism: number, data: Buffer, deadline: number): Promise<Buffer> {
    for (let attempt = 1; ; attempt++) {
      if (performance.now() >= deadline) throw timeoutError();
      try {
        const handle = current();
        pkcs11.C_SignInit(handle, { mechanism }, privateKey(handle, label, setting));
        // C_Sign runs on a libuv thread, so a slow token does not stall the process and the deadline can fire.
        const pending = pkcs11.C_SignAsync(handle, data, Buffer.alloc(SIGNATURE_BUFFER_BYTES));
        const outcome = await beforeDeadline(pending, deadline);
        if (outcome === 'timeout') {
          // The token still owns this session's operation: give the session up, close it once the call returns.
          const abandoned = handle;
          if (session === abandoned) {
            session = null;
            keys = new Map();
          }
          void pending.then(
            () => closeQuietly(abandoned),
            () => closeQuietly(abandoned),
          );
          throw timeoutError();
        }
        return outcome.value;
      } catch (error) {
        if (error instanceof SignerError) throw error;
        if (attempt === 1 && recoverable(error)) {
          logger?.warn({ token: tokenLabel, error: nameOf(error) }, 'PKCS#11 session lost; opening a new one');
          drop();
          continue;
        }
        throw deviceError(`signing with "${label}"`, error);
      }
    }
  }

  function timeoutError(): SignerError {
    return new SignerError('timeout', `the token "${tokenLabel}" did not sign within ${timeoutSeconds} s`);
  }

  // Opened here, not at the first signature, so a wrong label or PIN stops start-up.
  try {
    current();
  } catch (error) {
    module.release();
    if (error instanceof SignerError) throw error;
    throw deviceError(`opening a session on the token "${tokenLabel}"`, error);
  }

  return {
    keyFacts: (label, setting) =>
      serialised(async () => {
        const handle = current();
        try {
          return readKeyFacts(lib, pkcs11, handle, label, setting);
        } catch (error) {
          if (error instanceof SignerError) throw error;
          throw deviceError(`reading the key "${label}"`, error);
        }
      }),

    sign(label, setting, mechanism, data) {
      const deadline = performance.now() + timeoutMs;
      return beforeDeadline(
        serialised(() => signNow(label, setting, mechanism, data, deadline)),
        deadline,
      ).then((outcome) => {
        if (outcome === 'timeout') throw timeoutError(); // still queued behind a slow call; skipped when its turn comes
        return outcome.value;
      });
    },

    close: () =>
      serialised(async () => {
        if (closed) return;
        closed = true;
        drop();
        module.release();
      }),
  };
}

async function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<{ value: T } | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), Math.max(0, deadline - performance.now()));
  });
  try {
    return await Promise.race([work.then((value) => ({ value })), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function codeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** pkcs11js messages are the CKR_ name ("CKR_DEVICE_ERROR"): safe to log, never an argument. */
function nameOf(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

function deviceError(doing: string, error: unknown): SignerError {
  return new SignerError('device_error', `the PKCS#11 token failed ${doing}`, { details: nameOf(error), cause: error });
}
