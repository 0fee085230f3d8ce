// The treasury signers against a real SoftHSM2 token (created by the devnet's own code, keys generated inside it):
// their signatures verify with code that is not ours (viem's recovery, node:crypto's Ed25519), Ethereum signatures
// are low-s with the right recovery bit although SoftHSM returns high s half of the time, the keys cannot be read
// out, a lost session is reopened, and every set-up mistake stops with a code and the variable to fix.
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import * as kit from '@solana/kit';
import pino from 'pino';
import { recoverAddress, recoverTransactionAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signerAccount } from '../../src/chains/ethereum/account.js';
import { solanaKeyOf } from '../../src/chains/solana/signer.js';
import { createEthereumKeySigner, createSolanaKeySigner } from '../../src/chains/signers/key.js';
import { acquireModule, moduleInUse } from '../../src/chains/signers/pkcs11/module.js';
import { openPkcs11EthereumSigner, SECP256K1_N } from '../../src/chains/signers/pkcs11/ethereum.js';
import { findPrivateKey, findTokenSlot } from '../../src/chains/signers/pkcs11/objects.js';
import { openPkcs11SolanaSigner } from '../../src/chains/signers/pkcs11/solana.js';
import { SIGNER_ERROR_CODES, SignerError, type EthereumSigner, type SolanaSigner } from '../../src/chains/signers/port.js';
import { generateSolanaSecretKey } from '../../src/chains/solana/keys.js';
import { createSoftHsmToken, type SoftHsmToken } from '../../src/devnet/softhsm.js';

const HALF_N = SECP256K1_N / 2n;
// anvil's public test key #1: never funded anywhere that matters.
const ANVIL_KEY: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

let dir: string;
let token: SoftHsmToken;
let pin: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'stableroute-signers-'));
  // Fails (never skips) with an apt-get hint when SoftHSM2 is not installed.
  token = await createSoftHsmToken(join(dir, 'softhsm'));
  pin = (await readFile(token.pinFile, 'utf8')).trim();
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

function options(overrides: Partial<{ modulePath: string; tokenLabel: string; pin: string; timeoutSeconds: number }> = {}) {
  return { modulePath: token.module, tokenLabel: token.tokenLabel, pin, timeoutSeconds: 5, ...overrides };
}

async function refusal(opening: Promise<unknown>): Promise<SignerError> {
  const error = await opening.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(SignerError);
  return error as SignerError;
}

function ed25519PublicKey(address: string) {
  const bytes = Buffer.from(kit.getBase58Encoder().encode(address));
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: bytes.toString('base64url') }, format: 'jwk' });
}

/** A raw session of our own on the token, to do what a signer never does (read attributes, sign without fixing s). */
function rawSession() {
  const held = acquireModule(token.module);
  const { pkcs11, lib } = held;
  const session = pkcs11.C_OpenSession(findTokenSlot(pkcs11, token.tokenLabel, token.module), lib.CKF_SERIAL_SESSION);
  try {
    pkcs11.C_Login(session, lib.CKU_USER, pin);
  } catch (error) {
    if ((error as { code?: number }).code !== lib.CKR_USER_ALREADY_LOGGED_IN) throw error;
  }
  return {
    pkcs11,
    lib,
    session,
    key: (label: string) => findPrivateKey(lib, pkcs11, session, label, 'test'),
    close() {
      pkcs11.C_CloseSession(session);
      held.release();
    },
  };
}

// First, with no session open: SoftHSM logs a process in once for all its sessions, so a wrong PIN is only
// noticed by the first login.
describe('a token the signers cannot use stops them at once, naming the setting', () => {
  it('wrong PIN, unknown token, unknown key, a key of the other curve, a missing library', async () => {
    // One after another: each must find no session of the others open.
    const cases: [() => Promise<unknown>, string, string][] = [
      [() => openPkcs11EthereumSigner({ ...options({ pin: `${pin}x` }), keyLabel: token.ethereumKeyLabel }), 'pin_incorrect', 'PKCS11_PIN_FILE'],
      [() => openPkcs11SolanaSigner({ ...options({ tokenLabel: 'no-such-token' }), keyLabel: token.solanaKeyLabel }), 'token_not_found', 'PKCS11_TOKEN_LABEL'],
      [() => openPkcs11EthereumSigner({ ...options(), keyLabel: 'no-such-key' }), 'key_not_found', 'ETHEREUM_PKCS11_KEY_LABEL'],
      [() => openPkcs11EthereumSigner({ ...options(), keyLabel: token.solanaKeyLabel }), 'key_unsupported', 'ETHEREUM_PKCS11_KEY_LABEL'],
      [() => openPkcs11SolanaSigner({ ...options(), keyLabel: token.ethereumKeyLabel }), 'key_unsupported', 'SOLANA_PKCS11_KEY_LABEL'],
      [() => openPkcs11SolanaSigner({ ...options({ modulePath: join(dir, 'missing.so') }), keyLabel: token.solanaKeyLabel }), 'module_unavailable', 'PKCS11_MODULE'],
    ];
    for (const [opening, code, setting] of cases) {
      const error = await refusal(opening());
      expect({ code: error.code, setting: error.setting }, error.message).toEqual({ code, setting });
      expect(error.message.startsWith(`${setting}: `)).toBe(true);
      expect(error.message).not.toContain(pin);
      // A refused signer gives its session and its reference to the library back.
      expect(moduleInUse(token.module)).toBe(false);
    }
  });
});

describe('pkcs11 signers', () => {
  let eth: EthereumSigner;
  let sol: SolanaSigner;
  const warnings: string[] = [];

  beforeAll(async () => {
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    [eth, sol] = await Promise.all([
      openPkcs11EthereumSigner({ ...options(), keyLabel: token.ethereumKeyLabel, logger }),
      openPkcs11SolanaSigner({ ...options(), keyLabel: token.solanaKeyLabel, logger }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([eth?.close(), sol?.close()]);
  });

  it('derive the addresses of the keys the token generated', () => {
    expect(eth.kind).toBe('pkcs11');
    expect(eth.address).toBe(token.ethereumAddress);
    expect(sol.address).toBe(token.solanaAddress);
    expect(kit.isAddress(sol.address)).toBe(true);
  });

  it('Ethereum: a transaction signed through the viem account recovers to the treasury address', async () => {
    const account = signerAccount(eth);
    const serializedTransaction = await account.signTransaction({
      type: 'eip1559',
      chainId: 31337,
      nonce: 7,
      to: '0x52908400098527886E0F7030069857D2E4169EE7',
      value: 0n,
      data: '0xa9059cbb',
      gas: 60_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    expect(await recoverTransactionAddress({ serializedTransaction: serializedTransaction as `0x02${string}` })).toBe(eth.address);
    await expect(account.signMessage({ message: 'hello' })).rejects.toThrow(/transactions only/);
  });

  it('Ethereum: low s and the right recovery bit on every signature, although SoftHSM returns high s half the time', async () => {
    // What the token itself returns: without normalisation about half of these would be refused by Ethereum.
    const raw = rawSession();
    let highS = 0;
    try {
      for (let i = 0; i < 32; i++) {
        raw.pkcs11.C_SignInit(raw.session, { mechanism: raw.lib.CKM_ECDSA }, raw.key(token.ethereumKeyLabel));
        const rs = raw.pkcs11.C_Sign(raw.session, randomBytes(32), Buffer.alloc(64));
        if (BigInt(`0x${rs.subarray(32).toString('hex')}`) > HALF_N) highS += 1;
      }
    } finally {
      raw.close();
    }
    expect(highS).toBeGreaterThan(0);

    const parities = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const digest = randomBytes(32);
      const { r, s, yParity } = await eth.signDigest(digest);
      expect(s > 0n && s <= HALF_N, `signature ${i}: s is high`).toBe(true);
      expect(r > 0n && r < SECP256K1_N).toBe(true);
      const signature = { r: `0x${r.toString(16).padStart(64, '0')}` as Hex, s: `0x${s.toString(16).padStart(64, '0')}` as Hex, yParity };
      expect(await recoverAddress({ hash: `0x${digest.toString('hex')}`, signature })).toBe(eth.address);
      parities.add(yParity);
    }
    expect([...parities].sort()).toEqual([0, 1]);
  });

  it('Solana: Ed25519 signatures verify with node:crypto, also on a kit transaction', async () => {
    const publicKey = ed25519PublicKey(sol.address);
    for (let i = 0; i < 50; i++) {
      const message = randomBytes(1 + i * 20);
      const signature = await sol.signMessage(message);
      expect(signature).toHaveLength(64);
      expect(verify(null, message, publicKey, signature)).toBe(true);
      expect(verify(null, Buffer.concat([message, Buffer.from([0])]), publicKey, signature)).toBe(false);
    }
    const treasury = solanaKeyOf(sol);
    const message = kit.pipe(
      kit.createTransactionMessage({ version: 0 }),
      (m) => kit.setTransactionMessageFeePayerSigner(treasury.signer, m),
      (m) => kit.setTransactionMessageLifetimeUsingBlockhash({ blockhash: kit.blockhash('11111111111111111111111111111111'), lastValidBlockHeight: 1n }, m),
    );
    const transaction = await kit.signTransactionMessageWithSigners(message);
    const signature = transaction.signatures[treasury.address];
    expect(signature).toBeTruthy();
    expect(verify(null, new Uint8Array(transaction.messageBytes), publicKey, signature!)).toBe(true);
  });

  it('the private keys cannot be read out of the token', () => {
    const raw = rawSession();
    try {
      for (const label of [token.ethereumKeyLabel, token.solanaKeyLabel]) {
        const key = raw.key(label);
        expect(() => raw.pkcs11.C_GetAttributeValue(raw.session, key, [{ type: raw.lib.CKA_VALUE }])).toThrow(/CKR_ATTRIBUTE_SENSITIVE/);
        const [sensitive, extractable, alwaysSensitive, neverExtractable] = raw.pkcs11
          .C_GetAttributeValue(raw.session, key, [
            { type: raw.lib.CKA_SENSITIVE },
            { type: raw.lib.CKA_EXTRACTABLE },
            { type: raw.lib.CKA_ALWAYS_SENSITIVE },
            { type: raw.lib.CKA_NEVER_EXTRACTABLE },
          ])
          .map((attribute) => attribute.value[0]);
        expect({ sensitive, extractable, alwaysSensitive, neverExtractable }).toEqual({ sensitive: 1, extractable: 0, alwaysSensitive: 1, neverExtractable: 1 });
      }
    } finally {
      raw.close();
    }
  });

  it('serves concurrent callers one at a time on each signer, both signers at once', async () => {
    const digests = Array.from({ length: 20 }, () => randomBytes(32));
    const messages = Array.from({ length: 20 }, () => randomBytes(100));
    const [ethSignatures, solSignatures] = await Promise.all([
      Promise.all(digests.map((d) => eth.signDigest(d))),
      Promise.all(messages.map((m) => sol.signMessage(m))),
    ]);
    expect(new Set(ethSignatures.map((s) => s.r)).size).toBe(20);
    const publicKey = ed25519PublicKey(sol.address);
    solSignatures.forEach((signature, i) => expect(verify(null, messages[i]!, publicKey, signature)).toBe(true));
  });

  it('opens a new session when the token dropped the old one (CKR_SESSION_HANDLE_INVALID)', async () => {
    const held = acquireModule(token.module);
    try {
      // What a token reset does to every open session of this process.
      held.pkcs11.C_CloseAllSessions(findTokenSlot(held.pkcs11, token.tokenLabel, token.module));
    } finally {
      held.release();
    }
    const digest = randomBytes(32);
    const { r, s, yParity } = await eth.signDigest(digest);
    const signature = { r: `0x${r.toString(16).padStart(64, '0')}` as Hex, s: `0x${s.toString(16).padStart(64, '0')}` as Hex, yParity };
    expect(await recoverAddress({ hash: `0x${digest.toString('hex')}`, signature })).toBe(eth.address);
    const message = randomBytes(40);
    expect(verify(null, message, ed25519PublicKey(sol.address), await sol.signMessage(message))).toBe(true);
    expect(warnings.join('\n')).toContain('PKCS#11 session lost');
    expect(warnings.join('\n')).not.toContain(pin);
  });

  it('gives up on a signature past its deadline, queue wait included, and keeps working after', async () => {
    const hasty = await openPkcs11EthereumSigner({ ...options({ timeoutSeconds: 0.05 }), keyLabel: token.ethereumKeyLabel });
    try {
      // 200 signatures in a row cannot fit in 50 ms: the ones still queued at their deadline are refused.
      const outcomes = await Promise.allSettled(Array.from({ length: 200 }, () => hasty.signDigest(randomBytes(32))));
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
      expect(refused.length).toBeGreaterThan(0);
      for (const { reason } of refused) expect(reason).toMatchObject({ name: 'SignerError', code: 'timeout' });
      // A fresh call has a fresh deadline: the signer keeps working (on a loaded machine one signature alone may take
      // longer than 50 ms, so a few are tried; each refusal is a timeout, never a broken session).
      let signed: Awaited<ReturnType<typeof hasty.signDigest>> | null = null;
      for (let tries = 0; signed === null && tries < 10; tries++) {
        signed = await hasty.signDigest(randomBytes(32)).catch((error: unknown) => {
          expect(error).toMatchObject({ name: 'SignerError', code: 'timeout' });
          return null;
        });
      }
      expect(signed!.s <= HALF_N).toBe(true);
    } finally {
      await hasty.close();
    }
  });

  it('refuses to sign once closed, and the last signer closed finalises the library', async () => {
    const extra = await openPkcs11SolanaSigner({ ...options(), keyLabel: token.solanaKeyLabel });
    await extra.close();
    await extra.close(); // idempotent
    await expect(extra.signMessage(new Uint8Array(1))).rejects.toMatchObject({ code: 'closed' });
    expect(moduleInUse(token.module)).toBe(true); // eth and sol still hold it
    await Promise.all([eth.close(), sol.close()]);
    expect(moduleInUse(token.module)).toBe(false);
    await expect(eth.signDigest(randomBytes(32))).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('key signers', () => {
  it('keep the key out of every property, and sign like the pkcs11 ones', async () => {
    const ethereum = createEthereumKeySigner(ANVIL_KEY);
    expect(ethereum.address).toBe(privateKeyToAccount(ANVIL_KEY).address);
    const digest = randomBytes(32);
    const { r, s, yParity } = await ethereum.signDigest(digest);
    expect(s <= HALF_N).toBe(true);
    const signature = { r: `0x${r.toString(16).padStart(64, '0')}` as Hex, s: `0x${s.toString(16).padStart(64, '0')}` as Hex, yParity };
    expect(await recoverAddress({ hash: `0x${digest.toString('hex')}`, signature })).toBe(ethereum.address);

    const { secretKey, address } = generateSolanaSecretKey();
    const solana = createSolanaKeySigner(secretKey);
    expect(solana.address).toBe(address);
    const message = randomBytes(64);
    expect(verify(null, message, ed25519PublicKey(address), await solana.signMessage(message))).toBe(true);

    for (const [signer, key] of [[ethereum, ANVIL_KEY.slice(2)], [solana, secretKey]] as const) {
      const shown = `${JSON.stringify(signer)}\n${inspect(signer, { depth: 10, showHidden: true })}\n${Object.getOwnPropertyNames(signer).join(',')}`;
      expect(shown).not.toContain(key);
      await signer.close();
    }
    await expect(ethereum.signDigest(digest)).rejects.toMatchObject({ code: 'closed' });
  });
});

describe('signer error codes', () => {
  it('are all documented in docs/errors.md', async () => {
    const doc = await readFile(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const code of SIGNER_ERROR_CODES) expect(doc, code).toContain(`\`${code}\``);
  });
});
