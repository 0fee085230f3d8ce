// Custody in a PKCS#11 token, from the outside: `stableroute devnet --signer pkcs11 --json` creates a SoftHSM2 token
// holding both treasury keys and prints the signer settings; `stableroute serve` started with exactly those pays out
// on both local chains. The test reads the token itself (raw pkcs11js, not our signer code) to know the treasury
// addresses and to show the private keys cannot be read out, then looks for secrets where they must not be: the
// service's environment, its logs at trace level, the admin views and every row of its database.
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { getBase58Decoder, type Address as SolanaAddress } from '@solana/kit';
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token';
import * as pkcs11js from 'pkcs11js';
import { createPublicClient, http, parseAbi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, publicKeyToAddress } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { EXIT_MS, jsonLine, pay, readIntent, RPC_TIMEOUT_MS, SETTLE_MS, jsonRpc, startDevnet, withDeadline, type Devnet } from '../helpers/devnet-cli.js';
import { freePort, runCommand, startService, waitFor, waitHealthy, type ServiceProcess } from '../helpers/process.js';

const ERC20 = parseAbi(['function balanceOf(address) view returns (uint256)']);
const SIGNER_VARIABLES = [
  'ETHEREUM_SIGNER', 'SOLANA_SIGNER', 'PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_PIN_FILE',
  'ETHEREUM_PKCS11_KEY_LABEL', 'SOLANA_PKCS11_KEY_LABEL', 'SOFTHSM2_CONF',
] as const;

let devnet: Devnet | undefined;
let service: ServiceProcess | undefined;
let db: TestDatabase;
let scratch: string;
let env: Record<string, string>;
let pin: string;
let treasury: { ethereum: Address; solana: string };

beforeAll(async () => {
  [db, scratch] = await Promise.all([createTestDatabase(), mkdtemp(join(tmpdir(), 'stableroute-custody-'))]);
}, 60_000);

afterAll(async () => {
  for (const child of [service?.child, devnet?.child]) {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  await Promise.all([service?.exited, devnet?.exited]);
  await db?.drop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
}, 60_000);

/**
 * Reads the token the way any PKCS#11 client would, with none of our signer code: the public keys (hence the
 * treasury addresses) and the private keys' attributes.
 */
function readToken(): { ethereum: Address; solana: string; privateKeys: Record<string, number>[] } {
  process.env.SOFTHSM2_CONF = env.SOFTHSM2_CONF; // SoftHSM finds its token directory there
  const p = new pkcs11js.PKCS11();
  p.load(env.PKCS11_MODULE!);
  p.C_Initialize();
  try {
    const slot = p.C_GetSlotList(true).find((s) => p.C_GetTokenInfo(s).label.trim() === env.PKCS11_TOKEN_LABEL);
    expect(slot, 'the token the devnet printed').toBeDefined();
    const session = p.C_OpenSession(slot!, pkcs11js.CKF_SERIAL_SESSION);
    p.C_Login(session, pkcs11js.CKU_USER, pin);
    const find = (cls: number, label: string) => {
      p.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_CLASS, value: cls }, { type: pkcs11js.CKA_LABEL, value: label }]);
      const found = p.C_FindObjects(session, 10);
      p.C_FindObjectsFinal(session);
      expect(found, `${label}: one object of class ${cls}`).toHaveLength(1);
      return found[0]!;
    };
    const point = (label: string) =>
      p.C_GetAttributeValue(session, find(pkcs11js.CKO_PUBLIC_KEY, label), [{ type: pkcs11js.CKA_EC_POINT }])[0]!.value!.subarray(2);
    const privateKeys = [env.ETHEREUM_PKCS11_KEY_LABEL!, env.SOLANA_PKCS11_KEY_LABEL!].map((label) => {
      const key = find(pkcs11js.CKO_PRIVATE_KEY, label);
      let valueReadable = 1;
      try {
        p.C_GetAttributeValue(session, key, [{ type: pkcs11js.CKA_VALUE }]);
      } catch (error) {
        if (/CKR_ATTRIBUTE_SENSITIVE/.test((error as Error).message)) valueReadable = 0;
      }
      const [extractable, neverExtractable] = p.C_GetAttributeValue(session, key, [
        { type: pkcs11js.CKA_EXTRACTABLE },
        { type: pkcs11js.CKA_NEVER_EXTRACTABLE },
      ]);
      return { valueReadable, extractable: extractable!.value![0]!, neverExtractable: neverExtractable!.value![0]! };
    });
    const result = {
      ethereum: publicKeyToAddress(`0x${point(env.ETHEREUM_PKCS11_KEY_LABEL!).toString('hex')}`),
      solana: getBase58Decoder().decode(point(env.SOLANA_PKCS11_KEY_LABEL!)),
      privateKeys,
    };
    p.C_CloseSession(session);
    return result;
  } finally {
    p.C_Finalize();
    p.close();
  }
}


/** Every row of every table of the service's database (ours and pg-boss's), as text. */
async function databaseText(): Promise<string> {
  const { rows: tables } = await db.pool.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  expect(tables.length).toBeGreaterThan(5);
  const parts: string[] = [];
  for (const { schema, name } of tables) {
    const { rows } = await db.pool.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${schema}"."${name}" t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

describe('custody in a PKCS#11 token (SoftHSM2)', () => {
  it('devnet --signer pkcs11 prints signer settings and no key; the keys cannot leave the token', async () => {
    devnet = startDevnet(['--signer', 'pkcs11']);
    const running = devnet;
    env = await jsonLine(running.stdout, running.child, running.stderr);
    for (const name of SIGNER_VARIABLES) expect(typeof env[name], name).toBe('string');
    expect(env).toMatchObject({ ETHEREUM_SIGNER: 'pkcs11', SOLANA_SIGNER: 'pkcs11', ETHEREUM_ADAPTER: 'rpc', SOLANA_ADAPTER: 'rpc' });
    expect(Object.keys(env).filter((name) => /KEY(_FILE)?$/.test(name) && !/KEY_LABEL$/.test(name))).toEqual([]);
    expect(existsSync(env.PKCS11_MODULE!)).toBe(true);

    expect(statSync(env.PKCS11_PIN_FILE!).mode & 0o077, 'the PIN file is readable by its owner only').toBe(0);
    pin = readFileSync(env.PKCS11_PIN_FILE!, 'utf8').trim();
    expect(pin.length).toBeGreaterThanOrEqual(16);
    expect(JSON.stringify(env)).not.toContain(pin);
    // The token and the database directory of the run sit side by side in one run directory.
    expect(dirname(dirname(env.SOFTHSM2_CONF!))).toBe(dirname(env.DATA_DIR!));

    const token = readToken();
    treasury = { ethereum: token.ethereum, solana: token.solana };
    for (const key of token.privateKeys) expect(key).toEqual({ valueReadable: 0, extractable: 0, neverExtractable: 1 });

    // The devnet funded those addresses like its own treasuries.
    const eth = createPublicClient({ transport: http(env.ETHEREUM_RPC_URL, { timeout: RPC_TIMEOUT_MS, retryCount: 0 }) });
    expect(await eth.getBalance({ address: treasury.ethereum })).toBeGreaterThan(0n);
    const usdc = await eth.readContract({ address: env.ETHEREUM_USDC_ADDRESS as Address, abi: ERC20, functionName: 'balanceOf', args: [treasury.ethereum] });
    expect(usdc).toBe(1_000_000n * 1_000_000n);
    const [ata] = await findAssociatedTokenPda({ owner: treasury.solana as SolanaAddress, mint: env.SOLANA_USDC_MINT as SolanaAddress, tokenProgram: TOKEN_PROGRAM_ADDRESS });
    const balance = await jsonRpc<{ value: { amount: string } }>(env.SOLANA_RPC_URL!, 'getTokenAccountBalance', [ata]);
    expect(balance.value.amount).toBe(String(1_000_000n * 1_000_000n));
    expect((await jsonRpc<{ value: number }>(env.SOLANA_RPC_URL!, 'getBalance', [treasury.solana])).value).toBeGreaterThan(0);
  }, 60_000);

  it('serve with exactly those settings pays out on both chains, signed inside the token; no secret leaks', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = startService(['serve'], {
      ...env,
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'trace',
      CONFIRMATION_POLL_SECONDS: '0.5',
      HEALTH_COLLECT_SECONDS: '1',
    });
    await waitHealthy(base, service);
    const live = service;

    const overview = (await (await fetch(`${base}/admin/overview`)).json()) as { treasury_balances: { chain: string; address: string }[] };
    const addressOf = (chain: string) => overview.treasury_balances.find((t) => t.chain === chain)?.address;
    expect(addressOf('ethereum')).toBe(treasury.ethereum);
    expect(addressOf('solana')).toBe(treasury.solana);

    const solRecipient = getBase58Decoder().decode(randomBytes(32));
    const ethRecipient = privateKeyToAccount(generatePrivateKey()).address;
    const ids = [
      await pay(base, 4.321, { solana_address: solRecipient }, 'custody-sol'),
      await pay(base, 3.21, { ethereum_address: ethRecipient }, 'custody-eth'),
    ];
    const [solIntent, ethIntent] = await waitFor(
      'both payouts final',
      async () => {
        const intents = await Promise.all(ids.map((id) => readIntent(base, id)));
        return intents.every((i) => ['settled', 'failed', 'manual_review'].includes(i.status)) && intents;
      },
      SETTLE_MS,
      250,
    );
    for (const intent of [solIntent!, ethIntent!]) expect(intent.status, `${JSON.stringify(intent)}\n${live.output().slice(-3000)}`).toBe('settled');
    expect([solIntent!.selected_chain, ethIntent!.selected_chain]).toEqual(['solana', 'ethereum']);

    // Signed by the token's keys: the chains name them as the senders.
    const ethTx = ethIntent!.attempts.find((a) => a.status === 'confirmed')!.tx_id as Hex;
    const eth = createPublicClient({ transport: http(env.ETHEREUM_RPC_URL, { timeout: RPC_TIMEOUT_MS, retryCount: 0 }) });
    expect((await eth.getTransaction({ hash: ethTx })).from.toLowerCase()).toBe(treasury.ethereum.toLowerCase());
    expect(await eth.readContract({ address: env.ETHEREUM_USDC_ADDRESS as Address, abi: ERC20, functionName: 'balanceOf', args: [ethRecipient] })).toBe(3_210_000n);
    const solTx = await jsonRpc<{ meta: { err: unknown; postTokenBalances: { owner: string; uiTokenAmount: { amount: string } }[] }; transaction: { message: { accountKeys: string[] } } }>(
      env.SOLANA_RPC_URL!,
      'getTransaction',
      [solIntent!.attempts.find((a) => a.status === 'confirmed')!.tx_id, { encoding: 'json', commitment: 'finalized', maxSupportedTransactionVersion: 0 }],
    );
    expect(solTx.meta.err).toBeNull();
    expect(solTx.transaction.message.accountKeys[0]).toBe(treasury.solana); // the fee payer and only signer
    expect(solTx.meta.postTokenBalances.find((b) => b.owner === solRecipient)?.uiTokenAmount.amount).toBe('4321000');

    const reconciliation = (await (await fetch(`${base}/admin/reconciliation`)).json()) as { status: string }[];
    for (const row of reconciliation) expect(row.status, JSON.stringify(row)).toBe('ok');

    // No secret where it must not be. The keys never left the token (first test), so what could leak is the PIN,
    // or a treasury key handed to the service by mistake.
    const environ = readFileSync(`/proc/${live.child.pid}/environ`, 'utf8').split('\0');
    expect(environ.filter((entry) => /TREASURY_KEY/.test(entry))).toEqual([]);
    expect(environ.join('\n')).not.toContain(pin);
    for (const path of ['/admin/overview', '/admin/reconciliation', '/admin/failures', '/openapi.json']) {
      expect(await (await fetch(`${base}${path}`)).text(), path).not.toContain(pin);
    }
    expect(await databaseText()).not.toContain(pin);

    service.child.kill('SIGTERM');
    expect(await withDeadline(service.exited, EXIT_MS, 'serve exit after SIGTERM'), live.output().slice(-2000)).toBe(0);
    const output = live.output();
    expect(output).toMatch(/"level":20,.*"msg":"solana transfer signed"/); // trace-level logging was on
    expect(output).not.toContain(pin);
    expect(output).not.toMatch(/TREASURY_KEY/);
  }, 120_000);

  it('start-up stops, naming the variable, on a wrong PIN, a wrong key label, or a treasury key next to the token', async () => {
    const wrongPin = join(scratch, 'wrong.pin');
    await writeFile(wrongPin, `${randomBytes(8).toString('hex')}\n`, { mode: 0o600 });
    const cases: [Record<string, string>, RegExp][] = [
      [{ PKCS11_PIN_FILE: wrongPin }, /PKCS11_PIN_FILE: .*refused the PIN/],
      [{ SOLANA_PKCS11_KEY_LABEL: 'no-such-key' }, /SOLANA_PKCS11_KEY_LABEL: no private key labelled "no-such-key"/],
      [{ ETHEREUM_TREASURY_KEY: '59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' }, /ETHEREUM_TREASURY_KEY: must not be set with ETHEREUM_SIGNER=pkcs11/],
    ];
    const results = await Promise.all(
      cases.map(([overrides]) => runCommand(['serve'], { ...env, ...overrides, DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1' })),
    );
    results.forEach((result, i) => {
      const output = result.stdout + result.stderr;
      expect(result.code, output).toBe(1);
      expect(result.stderr).toMatch(cases[i]![1]);
      expect(output).not.toContain(pin);
      expect(output).not.toContain(readFileSync(wrongPin, 'utf8').trim());
    });
  }, 60_000);

  it('the devnet stops on SIGTERM and removes its token with the run directory', async () => {
    const running = devnet!;
    running.child.kill('SIGTERM');
    expect(await withDeadline(running.exited, EXIT_MS, 'devnet exit after SIGTERM'), running.stderr().slice(-2000)).toBe(0);
    expect(existsSync(env.SOFTHSM2_CONF!)).toBe(false);
    expect(existsSync(dirname(env.DATA_DIR!))).toBe(false);
  }, 30_000);
});
