// The operator console in a real browser: Debian's Chromium driven by playwright-core against the service as
// operators run it (API and workers in this process, real listeners, the admin listener on its own port). It
// watches a payment appear and move live, opens it, resolves a manual-review payment through the confirmation
// step, redelivers a failed webhook, and saves screenshots of the main pages in docs/screenshots (README: Console).
// No page may fetch anything from outside the service: every request leaving for another origin fails the test.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import pino from 'pino';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordExternalTransfers } from '../../src/chains/simulated/external-transfer.js';
import { loadConfig, type Config } from '../../src/config.js';
import { PAYMENT_STATUSES } from '../../src/domain/payment-intent.js';
import { WEBHOOK_EVENT_STATUSES } from '../../src/domain/webhook-delivery.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { ETH_ADDRESS, SOL_ADDRESS } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/process.js';
import { CHROMIUM, LAUNCH_ARGS, requireChromium, screenshot, VIEWPORT, watchPage, type PageProblems } from './harness.js';

let db: TestDatabase;
let runtime: Runtime;
let receiver: Server;
let userDataDir: string;
let browser: BrowserContext;
let page: Page;
let config: Config;
let admin: string;
let publicUrl: string;
const problems: PageProblems = { outside: [], errors: [] };

/** A merchant endpoint that refuses payment.broadcasting events, so some webhooks fail for good. */
async function startFlakyReceiver(): Promise<string> {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      res.statusCode = body.includes('"payment.broadcasting"') ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
}

async function pay(amountUsd: number, destination: Record<string, string> = { solana_address: SOL_ADDRESS }): Promise<string> {
  const headers = { 'x-api-key': 'console-test', 'content-type': 'application/json' };
  const quote = await fetch(`${publicUrl}/quotes`, { method: 'POST', headers, body: JSON.stringify({ amount_usd: amountUsd, destination, priority: 'fast' }) });
  expect(quote.status).toBe(201);
  const { quote_id } = (await quote.json()) as { quote_id: string };
  const intent = await fetch(`${publicUrl}/payment_intents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ quote_id, idempotency_key: `console-${amountUsd}-${Date.now()}` }),
  });
  expect(intent.status).toBe(201);
  return ((await intent.json()) as { payment_intent_id: string }).payment_intent_id;
}

async function statusOf(id: string): Promise<string> {
  return ((await (await fetch(`${admin}/admin/payments/${id}`)).json()) as { status: string }).status;
}

const shot = (name: string) => screenshot(page, name);

beforeAll(async () => {
  await requireChromium();
  db = await createTestDatabase();
  config = loadConfig({
    DATABASE_URL: db.url,
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PORT: '0',
    ADMIN_HOST: '127.0.0.1',
    DEV_MERCHANT_WEBHOOK_URL: await startFlakyReceiver(),
    WEBHOOK_POLL_SECONDS: '0.2',
    // Six attempts on the retry schedule (1, 60, 360, 1440, 3600 units) take about 11 s at 2 ms a unit.
    WEBHOOK_RETRY_DELAY_SECONDS: '0.002',
    SIM_CONFIRM_SECONDS: '1',
    SIM_STUCK_RATE: '0.5',
    SIM_SEED: 'console-screens',
    STUCK_AFTER_SECONDS: '3',
    CONFIRMATION_POLL_SECONDS: '0.2',
    CONFIRMATION_HEAD_POLL_SECONDS: '0.2',
    HEALTH_COLLECT_SECONDS: '0.3',
    DEPOSIT_POLL_SECONDS: '0.2',
    EXECUTION_RETRY_DELAY_SECONDS: '0.2',
  });
  runtime = await startRuntime(config, { api: true, workers: true }, { log: pino({ level: 'silent' }) });
  admin = runtime.addresses.admin!;
  publicUrl = runtime.addresses.public!;
  userDataDir = await mkdtemp(join(tmpdir(), 'stableroute-chromium-'));
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: LAUNCH_ARGS,
    viewport: VIEWPORT,
    timezoneId: 'UTC',
  });
  page = browser.pages()[0] ?? (await browser.newPage());
  // A refused action (409) is an expected answer, shown in the page; anything else is a defect.
  watchPage(page, [admin, publicUrl], problems, [409]);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
  await db?.drop();
  if (userDataDir) await rm(userDataDir, { recursive: true, force: true });
}, 120_000);

describe('the operator console in Chromium', () => {
  it('shows a new payment live, without a reload, and its status as it moves', async () => {
    await page.goto(`${admin}/console`);
    await page.locator('[data-testid=live][data-state=live]').waitFor({ timeout: 15_000 });
    // In development, from loopback, no token is needed: the console says who it acts as.
    await expect(page.locator('[data-testid=whoami]').textContent()).resolves.toContain('local (development)');
    await page.evaluate(() => Object.assign(globalThis, { samePage: true }));
    const id = await pay(25);
    const row = page.locator(`tr[data-id="${id}"]`);
    await row.waitFor({ timeout: 10_000 });
    // It settles or is set aside for review within a few seconds; the row follows without a reload.
    await row.locator('[data-status=settled], [data-status=manual_review]').waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => (globalThis as { samePage?: boolean }).samePage)).toBe(true);
  }, 60_000);

  it('opens a payment: timeline, attempts with tx ids, ledger postings, webhook events', async () => {
    const id = await pay(40, { ethereum_address: ETH_ADDRESS });
    await waitFor('payment to leave execution', async () => ['settled', 'manual_review'].includes(await statusOf(id)), 20_000);
    await page.goto(`${admin}/console#/payments`);
    await page.locator(`tr[data-id="${id}"] a`).first().click();
    await page.locator('[data-testid=payment-summary]').waitFor();
    expect(await page.locator('[data-testid=payment-summary]').textContent()).toContain(id);
    const steps = await page.locator('[data-testid=timeline] [data-status]').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
    expect(steps.slice(0, 5)).toEqual(['created', 'quoted', 'route_selected', 'broadcasting', 'broadcasted']);
    // Each attempt shows its transaction id (shortened, the whole id in its title).
    const record = (await (await fetch(`${admin}/admin/payments/${id}`)).json()) as { attempts: { tx_id: string }[] };
    expect(record.attempts.length).toBeGreaterThan(0);
    for (const { tx_id } of record.attempts) await page.locator(`.hash[title="${tx_id}"]`).first().waitFor();
    await expect(page.getByText('treasury_reserved').first().isVisible()).resolves.toBe(true);
    await shot('payment');
  }, 60_000);

  it('resolves a manual-review payment through the confirmation step and shows the new status', async () => {
    // SIM_STUCK_RATE 0.5 with a fixed seed: some of these transfers never confirm and are set aside for review.
    let stuck: string | undefined;
    for (let round = 0; round < 6 && !stuck; round++) {
      const ids = await Promise.all([1, 2, 3].map((n) => pay(10 + round * 3 + n)));
      await waitFor('the round to settle or stick', async () => {
        const statuses = await Promise.all(ids.map(statusOf));
        return statuses.every((s) => s === 'settled' || s === 'manual_review') ? statuses : null;
      }, 30_000);
      for (const id of ids) if ((await statusOf(id)) === 'manual_review') stuck ??= id;
    }
    expect(stuck, 'a payment in manual review').toBeDefined();

    await page.goto(`${admin}/console#/review`);
    const row = page.locator(`#manual-review tr[data-id="${stuck}"]`);
    await row.waitFor();
    const waiting = await page.locator('#manual-review tbody tr').count();
    await page.locator('[data-testid=counts] a', { hasText: `${waiting} manual review` }).waitFor();
    await shot('review');

    // The chain still holds the transfer as pending: failing it is refused, and nothing changes.
    await row.locator('[data-action=failed]').click();
    await page.locator('[data-testid=confirm]').click();
    await expect(page.locator('[data-testid=confirm-dialog] .error-note').textContent()).resolves.toContain('INVALID_STATE');
    expect(await statusOf(stuck!)).toBe('manual_review');
    await page.getByRole('button', { name: 'Back' }).click();

    await row.locator('[data-action=settled]').click();
    await expect(page.locator('[data-testid=confirm-dialog]').textContent()).resolves.toContain(stuck!);
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: `${stuck} is now settled` }).waitFor();
    await row.waitFor({ state: 'detached' });
    expect(await statusOf(stuck!)).toBe('settled');

    await page.goto(`${admin}/console#/payments/${stuck}`);
    await page.locator('[data-testid=payment-summary] h1 [data-status=settled]').waitFor();
  }, 120_000);

  it('lists webhook events and redelivers a failed one after confirmation', async () => {
    await waitFor('a failed webhook', async () => ((await (await fetch(`${admin}/admin/webhook-events?status=failed`)).json()) as unknown[]).length > 0, 30_000);
    await page.goto(`${admin}/console#/webhooks?status=failed`);
    const table = page.locator('[data-testid=webhook-events]');
    await table.waitFor();
    // The tabs are the domain's statuses, read from the service: failed (the default) first, then all of them.
    const tabs = await page.locator('nav.tabs a').allTextContents();
    expect(tabs[0]).toBe('failed');
    expect(tabs.at(-1)).toBe('all');
    expect([...tabs.slice(0, -1)].sort()).toEqual([...WEBHOOK_EVENT_STATUSES].sort());
    await table.locator('tbody tr').first().click();
    await page.locator('tr.deliveries table').waitFor();
    await shot('webhooks');
    await table.locator('[data-action=redeliver]').first().click();
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: 'queued again' }).waitFor();
  }, 60_000);

  it('shows treasury and chain health, and filters payments by status', async () => {
    const withdrawal = await fetch(`${admin}/admin/withdrawals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '12.5' }),
    });
    expect(withdrawal.status).toBe(201);
    const withdrawalId = ((await withdrawal.json()) as { id: string }).id;
    await page.goto(`${admin}/console#/treasury`);
    await page.locator('[data-testid=treasury] [data-chain=solana]').waitFor();
    await page.locator('[data-testid=reconciliation]').waitFor();
    await page.locator('[data-testid=reconciliation-history] tbody tr').first().waitFor();
    await page.locator(`[data-testid=withdrawals] tr[data-id="${withdrawalId}"]`).waitFor();
    // A deposit from outside shows in the Deposits panel once the scanner books it, without a reload.
    const treasury = (await (await fetch(`${admin}/admin/treasury`)).json()) as { chain: string; address: string }[];
    const [depositTx] = await recordExternalTransfers(runtime.ctx.pool, config.simSeed, [
      // From an address no payout went to: plain funding (USDC from a payout's recipient would wait as unmatched).
      { chain: 'solana', from: 'So11111111111111111111111111111111111111112', to: treasury.find((t) => t.chain === 'solana')!.address, currency: 'USDC', amountUnits: 2_500_000_000n, at: new Date() },
    ]);
    const deposit = page.locator(`[data-testid=deposits] tr[data-tx="${depositTx}"]`);
    await deposit.waitFor();
    expect(await deposit.locator('[data-status]').getAttribute('data-status')).toBe('funding');
    await shot('treasury');

    await page.goto(`${admin}/console#/health`);
    await page.locator('[data-testid=chart-estimated_fee_usd] polyline').first().waitFor({ state: 'attached' });
    await page.locator('[data-testid=route-distribution] .bar-row').first().waitFor();
    await shot('health');

    await page.goto(`${admin}/console#/payments?status=settled`);
    await page.locator('[data-testid=payments-table] tbody tr').first().waitFor();
    // The status filter offers the domain's statuses in its order: the console reads them from the service.
    const offered = await page.locator('select[name=status] option').evaluateAll((els) => els.map((e) => (e as unknown as { value: string }).value));
    expect(offered).toEqual(['', ...PAYMENT_STATUSES]);
    const statuses = await page.locator('[data-testid=payments-table] tbody [data-status]').evaluateAll((els) => els.map((e) => e.getAttribute('data-status')));
    expect(new Set(statuses)).toEqual(new Set(['settled']));
    // The export links carry the filters the page shows; the download is the service's CSV of exactly those.
    const exportLink = page.locator('[data-testid=export-payments]');
    expect(await exportLink.getAttribute('href')).toBe('/admin/exports/payments.csv?status=settled');
    expect(await page.locator('[data-testid=export-ledger]').getAttribute('href')).toBe('/admin/exports/ledger.csv?status=settled');
    const [download] = await Promise.all([page.waitForEvent('download'), exportLink.click()]);
    const exported = parse(await readFile(await download.path(), 'utf8'), { columns: true, record_delimiter: ['\r\n'] }) as { status: string }[];
    expect(exported.length).toBeGreaterThan(0);
    expect(new Set(exported.map((r) => r.status))).toEqual(new Set(['settled']));
    await page.goto(`${admin}/console#/payments?chain=solana&merchant=mer_test&from=2026-03-01&to=2026-03-31`);
    await expect.poll(() => page.locator('[data-testid=export-payments]').getAttribute('href')).toBe(
      '/admin/exports/payments.csv?chain=solana&merchant_id=mer_test&from=2026-03-01T00%3A00%3A00.000Z&to=2026-04-01T00%3A00%3A00.000Z',
    );
    await page.goto(`${admin}/console#/payments`);
    const more = await Promise.all([31.5, 52, 18.25, 75, 9.99, 120].map((usd, i) => pay(usd, i % 2 ? { ethereum_address: ETH_ADDRESS } : undefined)));
    await page.locator(`tr[data-id="${more.at(-1)}"]`).waitFor();
    await page.locator('[data-testid=payments-table] tbody tr').nth(9).waitFor();
    // The table and the header's counts follow the live stream each at its own pace: they must meet.
    const agree = async () => {
      const rows = await page.locator('[data-testid=payments-table] tbody tr').count();
      return (await page.locator('[data-testid=counts] a', { hasText: `${rows} payments` }).count()) === 1;
    };
    await expect.poll(agree, { timeout: 30_000, interval: 250 }).toBe(true);
    await shot('payments');
  }, 60_000);

  it('serves interactive API docs at /docs on the public listener only, with the examples', async () => {
    await page.goto(`${publicUrl}/docs`);
    await page.locator('.opblock-summary-path', { hasText: '/payment_intents' }).first().waitFor({ timeout: 15_000 });
    await page.locator('#operations-merchant-createQuote').click();
    // The documented examples: the request's, and one per error code under its status.
    await page.locator('#operations-merchant-createQuote .body-param__example, #operations-merchant-createQuote .highlight-code').first().waitFor();
    await page.locator('#operations-merchant-createQuote option', { hasText: 'INVALID_AMOUNT' }).first().waitFor({ state: 'attached' });
    await shot('docs');
    expect((await fetch(`${admin}/docs`)).status).toBe(404);
    expect((await fetch(`${publicUrl}/console`)).status).toBe(404);
  }, 60_000);

  it('in development goes to the sign-in page on request, and back as local without a token', async () => {
    await page.goto(`${admin}/console#/audit`);
    await page.locator('[data-testid=whoami] button', { hasText: 'Sign in with a token' }).click();
    await page.locator('[data-testid=signin]').waitFor();
    await page.getByRole('button', { name: 'Continue as local (development)' }).click();
    await expect(page.locator('[data-testid=whoami]').textContent()).resolves.toContain('local (development)');
    // The development actor's actions are in the audit log under its name (the resolution and redelivery above).
    await page.locator('[data-testid=audit] tr[data-actor=local]').first().waitFor();
  }, 30_000);

  it('fetched nothing from outside the service and raised no page error', () => {
    expect(problems.outside).toEqual([]);
    expect(problems.errors).toEqual([]);
  });
});
