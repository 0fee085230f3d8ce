// A fresh laptop: no DATABASE_URL. `serve` starts an embedded PostgreSQL in DATA_DIR, migrates, serves; SIGTERM
// exits 0; data survives a restart; a kill -9 (which orphans PostgreSQL) does not stop the next start.
import { chmod, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, runCommand, startService, waitHealthy, type ServiceProcess } from '../helpers/process.js';

let privateDir: string;
let dataDir: string;
let service: ServiceProcess | undefined;

beforeAll(async () => {
  // Inside a mode-700 directory, like a checkout in root's home: as root, PostgreSQL runs as the postgres user and
  // must still reach its data.
  privateDir = await mkdtemp(join(tmpdir(), 'stableroute-e2e-'));
  await chmod(privateDir, 0o700);
  dataDir = join(privateDir, 'data');
});
afterAll(async () => {
  if (service && service.child.exitCode === null) {
    service.child.kill('SIGTERM');
    await service.exited;
  }
  await rm(privateDir, { recursive: true, force: true });
});

const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

describe('embedded PostgreSQL start-up', () => {
  it('serves, stops on SIGTERM with exit 0, restarts with its data, and survives a kill -9', { timeout: 180_000 }, async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', SIM_CONFIRM_SECONDS: '0.5', CONFIRMATION_POLL_SECONDS: '0.2' };

    service = startService(['serve'], env);
    await waitHealthy(base, service, 120_000);
    if (process.getuid?.() === 0) expect((await stat(privateDir)).mode & 0o777).toBe(0o701); // search, not read
    const quote = (await (
      await fetch(`${base}/quotes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'any' },
        body: JSON.stringify({ amount_usd: 5, destination: { solana_address: SOL }, priority: 'fast' }),
      })
    ).json()) as { quote_id: string };
    const created = await fetch(`${base}/payment_intents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'any' },
      body: JSON.stringify({ quote_id: quote.quote_id, idempotency_key: 'embedded-1' }),
    });
    expect(created.status).toBe(201);
    const { payment_intent_id: id } = (await created.json()) as { payment_intent_id: string };

    // An operator command on the same DATA_DIR while the service runs shares its server instead of stopping it.
    const onboarded = await runCommand(['merchants', 'create', '--name', 'Live', '--webhook-url', 'http://127.0.0.1:9/hooks', '--json'], {
      DATA_DIR: dataDir,
    });
    expect(onboarded.code, onboarded.stderr).toBe(0);
    const { api_key: liveKey } = JSON.parse(onboarded.stdout.trim().split('\n').at(-1)!) as { api_key: string };
    const test = await fetch(`${base}/webhooks/test`, { method: 'POST', headers: { 'x-api-key': liveKey } });
    expect(test.status).toBe(200);
    expect(((await test.json()) as { url: string }).url).toBe('http://127.0.0.1:9/hooks'); // the new merchant, served live

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);

    service = startService(['serve'], env);
    await waitHealthy(base, service, 120_000);
    const read = await fetch(`${base}/payment_intents/${id}`, { headers: { 'x-api-key': 'any' } });
    expect(read.status).toBe(200);

    service.child.kill('SIGKILL');
    await service.exited;
    service = startService(['serve'], env);
    await waitHealthy(base, service, 120_000);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);

    // The CLI works on the same embedded data.
    const merchant = await runCommand(['merchants', 'create', '--name', 'Acme', '--webhook-url', 'https://acme.example/hooks', '--json'], {
      DATA_DIR: dataDir,
    });
    expect(merchant.code).toBe(0);
    const last = JSON.parse(merchant.stdout.trim().split('\n').at(-1)!);
    expect(last.merchant_id).toMatch(/^mer_/);
    expect(typeof last.api_key).toBe('string');
    const verify = await runCommand(['ledger', 'verify'], { DATA_DIR: dataDir });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('a bad setting stops start-up with a message naming the variable', async () => {
    const result = await runCommand(['serve'], { DATA_DIR: dataDir, CONFIRMATION_POLL_SECONDS: 'soon' });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('CONFIRMATION_POLL_SECONDS');
  });
});
