// Treasury keys never leave the signers: not in the logs (at trace level), not in any admin view, not in an error
// message. The service runs as operators run it, `stableroute serve` in rpc mode against the local chains.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getBase58Decoder, getBase58Encoder } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEthereumDevnet, type EthereumDevnet } from '../../src/devnet/ethereum.js';
import { startSolanaDevnet, type SolanaDevnet } from '../../src/devnet/solana.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, killAll, runCommand, type ServiceProcess, startService, waitFor, waitHealthy } from '../helpers/process.js';
import { devnetEnv } from '../helpers/devnet.js';
import { KEY } from '../helpers/devnet-cli.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

let eth: EthereumDevnet;
let sol: SolanaDevnet;
let db: TestDatabase;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  [eth, sol, db] = await Promise.all([startEthereumDevnet(), startSolanaDevnet({ slotMs: 50, finalizeAfterSlots: 8 }), createTestDatabase()]);
}, 60_000);

afterAll(async () => {
  await killAll([service]);
  await Promise.all([eth?.stop(), sol?.stop()]);
  await db?.drop();
});

function chainEnv(): Record<string, string> {
  return devnetEnv(eth, sol, { ETHEREUM_CONFIRMATIONS: '1' });
}

/** Every spelling of the private part of both keys that a leak could take. */
function keyForms(): string[] {
  const secret = getBase58Encoder().encode(sol.treasuryKey);
  const seed = secret.slice(0, 32);
  return [
    eth.treasuryKey.slice(2),
    sol.treasuryKey,
    getBase58Decoder().decode(seed),
    Buffer.from(seed).toString('hex'),
    Buffer.from(seed).toString('base64'),
    Array.from(seed).join(','),
  ];
}

function expectNoKey(text: string, where: string): void {
  const haystack = text.toLowerCase();
  for (const form of keyForms()) expect(haystack.includes(form.toLowerCase()), `${where} contains a treasury key`).toBe(false);
}

async function pay(base: string, destination: object, idempotencyKey: string): Promise<string> {
  const quote = await fetch(`${base}/quotes`, { method: 'POST', headers: KEY, body: JSON.stringify({ amount_usd: 1.25, destination, priority: 'fast' }) });
  const quoteBody = (await quote.json()) as { quote_id: string };
  expect(quote.status, JSON.stringify(quoteBody)).toBe(201);
  const intent = await fetch(`${base}/payment_intents`, {
    method: 'POST',
    headers: KEY,
    body: JSON.stringify({ quote_id: quoteBody.quote_id, idempotency_key: idempotencyKey }),
  });
  const intentBody = (await intent.json()) as { payment_intent_id: string };
  expect(intent.status, JSON.stringify(intentBody)).toBe(201);
  return intentBody.payment_intent_id;
}

describe('treasury keys stay secret', () => {
  it('serve at LOG_LEVEL=trace: neither the logs nor the admin views show a key, through payouts on both chains', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    service = startService(['serve'], {
      ...chainEnv(),
      DATABASE_URL: db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'trace',
      CONFIRMATION_POLL_SECONDS: '0.2',
      HEALTH_COLLECT_SECONDS: '0.5',
    });
    await waitHealthy(base, service);
    const ids = [
      await pay(base, { solana_address: getBase58Decoder().decode(new Uint8Array(32).fill(7)) }, 'keys-sol'),
      await pay(base, { ethereum_address: '0x52908400098527886E0F7030069857D2E4169EE7' }, 'keys-eth'),
    ];
    const live = service;
    await waitFor(
      'both payouts on chain',
      async () => {
        const statuses = await Promise.all(
          ids.map(async (id) => ((await (await fetch(`${base}/payment_intents/${id}`, { headers: KEY })).json()) as { status: string }).status),
        );
        return statuses.every((s) => ['broadcasted', 'pending_confirmation', 'settled'].includes(s)) && statuses;
      },
      30_000,
      200,
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${live.output().slice(-3000)}`);
    });

    for (const path of ['/admin/overview', '/admin/reconciliation', '/admin/failures', '/openapi.json']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(200);
      const body = await res.text();
      expectNoKey(body, path);
      if (path === '/admin/overview') {
        // Admin views show the addresses instead.
        expect(body).toContain(sol.treasuryAddress);
        expect(body.toLowerCase()).toContain(eth.treasuryAddress.toLowerCase());
      }
    }
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    const output = service.output();
    expect(output).toMatch(/"level":20,.*"msg":"solana transfer signed"/); // debug lines were written
    expectNoKey(output, 'the service log');
  }, 90_000);

  it('the logger redacts keys inside a logged config or context, and a config never serialises its keys', async () => {
    // Logs to stdout exactly as the service does (createLogger), from a child process that reads these variables.
    const script = `
      import { inspect } from 'node:util';
      import { createLogger } from './src/runtime.ts';
      import { loadConfig } from './src/config.ts';
      const config = loadConfig();
      const log = createLogger({ logLevel: 'trace' });
      log.trace({ config }, 'config');
      log.debug({ ctx: { config } }, 'context');
      log.info({ ethereum: config.chains.ethereum, solana: config.chains.solana }, 'sections');
      log.warn({ ctx: { config: { solana: { treasuryKey: process.env.SOLANA_TREASURY_KEY } } } }, 'a copied section');
      log.error({ options: { treasuryKey: process.env.ETHEREUM_TREASURY_KEY }, env: process.env }, 'adapter options');
      process.stdout.write(inspect(config, { depth: 10 }) + '\\n');
      process.stdout.write(JSON.stringify(config, (_, v) => (typeof v === 'bigint' ? v.toString() : v)) + '\\n');
      if (config.chains.solana.treasuryKey !== process.env.SOLANA_TREASURY_KEY) throw new Error('the key is not readable');
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...chainEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    expect(output.match(/"msg":/g)).toHaveLength(5);
    expectNoKey(output, 'a logged config');
    // Nor the webhook secrets (development defaults here), wherever a config section lands in a log line.
    const logLines = output.split('\n').filter((line) => line.includes('"msg":'));
    expect(logLines.filter((line) => line.includes('stableroute-dev-webhook-secret'))).toEqual([]);
  }, 30_000);

  it('errors name the setting, never the key: a malformed key, an unreachable node', async () => {
    const badSolana = `${sol.treasuryKey.slice(0, -1)}${sol.treasuryKey.endsWith('1') ? '2' : '1'}`; // wrong public half
    const badEthereum = `${eth.treasuryKey}ff`;
    const badKeys: Record<string, string>[] = [{ SOLANA_TREASURY_KEY: badSolana }, { ETHEREUM_TREASURY_KEY: badEthereum }];
    for (const env of badKeys) {
      const result = await runCommand(['serve'], { ...chainEnv(), ...env, DATABASE_URL: db.url, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'trace' });
      expect(result.code, result.stdout + result.stderr).toBe(1);
      expect(result.stderr).toMatch(/treasury ?key|secret key/i);
      expectNoKey(result.stdout + result.stderr, `the start-up error for ${Object.keys(env)[0]}`);
      expect(result.stdout + result.stderr).not.toContain(Object.values(env)[0]!.slice(2, 40));
    }
    const down = `http://127.0.0.1:${await freePort()}`;
    const reconcile = await runCommand(['reconcile', '--json'], {
      ...chainEnv(),
      ETHEREUM_RPC_URL: down,
      SOLANA_RPC_URL: down,
      RPC_TIMEOUT_SECONDS: '1',
      DATABASE_URL: db.url,
      LOG_LEVEL: 'trace',
    });
    expect(reconcile.code).toBe(1);
    expect(reconcile.stdout).toContain('"status":"error"');
    expectNoKey(reconcile.stdout + reconcile.stderr, 'a reconciliation error');
  }, 60_000);
});
