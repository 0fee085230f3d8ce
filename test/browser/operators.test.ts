// Named operators in the console (issue 25), in Chromium against the service in production (real listeners, the admin
// listener on its own port, workers running, WITHDRAWAL_APPROVAL_ABOVE_USD set): the sign-in page, a wrong token
// refused in words, an admin who requests a large withdrawal and cannot approve it (the button is not offered; a
// stale page's approval is refused with SELF_APPROVAL in words), signs out; an approver who signs in, sees who
// requested it and approves it; "1 of 2" on a payment held by its merchant's threshold; the audit log naming both;
// a viewer offered no action at all; and a session that ends when its operator is disabled. The console offers the
// chains CHAINS lists, in its order (a third, base, included). Writes signin.png, approvals.png and audit.png to
// docs/screenshots.
import pino from 'pino';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createMerchant } from '../../src/core/merchants/merchants.js';
import { createOperator, disableOperator, type OperatorRole } from '../../src/core/operators/operators.js';
import { updateMerchantPolicy } from '../../src/core/merchants/policies.js';
import { startRuntime, type Runtime } from '../../src/runtime.js';
import { testAudit } from '../helpers/audit.js';
import { SOL_ADDRESS } from '../helpers/context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { CHROMIUM, LAUNCH_ARGS, requireChromium, screenshot, VIEWPORT, watchPage, type PageProblems } from './harness.js';

const env = {
  NODE_ENV: 'production',
  API_KEY_SALT: 'c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0',
  WEBHOOK_SIGNING_SECRET: '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a6978',
  AUDIT_KEY: '6e2b9d4f1a8c3e7b5d0f2a9c4e6b8d1f3a5c7e9b0d2f',
  WITHDRAWAL_APPROVAL_ABOVE_USD: '1000',
  CHAINS: 'solana,ethereum,base',
  LOG_LEVEL: 'silent',
  PORT: '0',
  HOST: '127.0.0.1',
  ADMIN_PORT: '0',
  ADMIN_HOST: '127.0.0.1',
  SIM_CONFIRM_SECONDS: '1',
  CONFIRMATION_POLL_SECONDS: '0.2',
  CONFIRMATION_HEAD_POLL_SECONDS: '0.2',
  HEALTH_COLLECT_SECONDS: '1',
};

let db: TestDatabase;
let config: Config;
let runtime: Runtime;
let browser: Browser;
let admin: string;
let publicUrl: string;
const problems: PageProblems = { outside: [], errors: [] };
const people = new Map<string, { id: string; token: string }>();
let withdrawalId: string | undefined;
/** The set-up's own records, as `stableroute` run by an OS user named ops would write them. */
const setUp = (action: string) => testAudit(action, { id: 'cli:ops', role: 'admin', peer: null });
let heldPaymentId: string;

async function operator(name: string, role: OperatorRole): Promise<void> {
  const { operator: row, token } = await createOperator(db.pool, config, { name, role }, new Date(), setUp('operator.create'));
  people.set(name, { id: row.id, token });
}

/** A payment of 50 USD held by its merchant's approval threshold (10 USD): it needs two approvers in production. */
async function heldPayment(): Promise<string> {
  const { merchant, apiKey } = await createMerchant(db.pool, config, { name: 'Held Co', webhookUrl: null }, new Date(), setUp('merchant.create'));
  await updateMerchantPolicy(db.pool, config, merchant.id, { approvalAboveMicros: 10_000_000n }, new Date(), setUp('merchant.policy'));
  const headers = { 'x-api-key': apiKey, 'content-type': 'application/json' };
  const quote = await fetch(`${publicUrl}/quotes`, { method: 'POST', headers, body: JSON.stringify({ amount_usd: 50, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' }) });
  expect(quote.status).toBe(201);
  const { quote_id } = (await quote.json()) as { quote_id: string };
  const intent = await fetch(`${publicUrl}/payment_intents`, { method: 'POST', headers, body: JSON.stringify({ quote_id, idempotency_key: 'held-in-console' }) });
  expect(intent.status).toBe(201);
  return ((await intent.json()) as { payment_intent_id: string }).payment_intent_id;
}

/** A fresh browser context (its own sessionStorage) and page, watched. */
async function freshPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport: VIEWPORT, timezoneId: 'UTC' });
  const page = await context.newPage();
  // 401: the sign-in page's checks, the wrong token, a session that ends; 403: the refused self-approval.
  watchPage(page, [admin, publicUrl], problems, [401, 403]);
  return { context, page };
}

async function signIn(page: Page, name: string): Promise<void> {
  await page.locator('[data-testid=signin] input[name=token]').fill(people.get(name)!.token);
  await page.locator('[data-testid=signin] button[type=submit]').click();
  await page.locator('[data-testid=whoami]', { hasText: name }).waitFor();
}

async function signOut(page: Page): Promise<void> {
  await page.locator('[data-testid=whoami] button', { hasText: 'Sign out' }).click();
  await page.locator('[data-testid=signin-notice]', { hasText: 'You signed out' }).waitFor();
  expect(await page.evaluate('sessionStorage.length')).toBe(0);
}

const row = (page: Page, id: string) => page.locator(`[data-testid=approvals] tr[data-id="${id}"]`);

beforeAll(async () => {
  await requireChromium();
  db = await createTestDatabase();
  config = loadConfig({ ...env, DATABASE_URL: db.url });
  runtime = await startRuntime(config, { api: true, workers: true }, { log: pino({ level: 'silent' }) });
  admin = runtime.addresses.admin!;
  publicUrl = runtime.addresses.public!;
  await operator('Ada Lovelace', 'admin');
  await operator('Bob Approver', 'approver');
  await operator('Vic Viewer', 'viewer');
  heldPaymentId = await heldPayment();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: LAUNCH_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  await db?.drop();
}, 120_000);

describe('operators in the console (production)', () => {
  it('an admin signs in, requests a withdrawal above the threshold, cannot approve it, and signs out', async () => {
    const { context, page } = await freshPage();
    await page.goto(`${admin}/console`);
    // Production: the service wants a token, so the console starts at the sign-in page, with nothing else on it.
    await page.locator('[data-testid=signin]').waitFor();
    expect(await page.locator('[data-testid=whoami]').count()).toBe(0);
    await screenshot(page, 'signin');

    await page.locator('[data-testid=signin] input[name=token]').fill('sr_op_not-a-real-token');
    await page.locator('[data-testid=signin] button[type=submit]').click();
    await expect(page.locator('[data-testid=signin] .error-note').textContent()).resolves.toContain('did not accept this token');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);

    await signIn(page, 'Ada Lovelace');
    await expect(page.locator('[data-testid=whoami] .role').textContent()).resolves.toBe('admin');

    // The admin requests 5000 USDC (above 1000) from the treasury page, through the confirmation step.
    await page.goto(`${admin}/console#/treasury`);
    const form = page.locator('[data-testid=new-withdrawal]');
    // The chains CHAINS lists, by name, the first one chosen until the admin picks another.
    const chains = form.locator('select[name=chain]');
    await expect(chains.locator('option').evaluateAll((options) => options.map((o) => [o.getAttribute('value'), o.textContent]))).resolves.toEqual([
      ['solana', 'Solana'],
      ['ethereum', 'Ethereum'],
      ['base', 'Base'],
    ]);
    expect(await chains.inputValue()).toBe('solana');
    await chains.selectOption('solana');
    await form.locator('input[name=to]').fill(SOL_ADDRESS);
    await form.locator('input[name=amount]').fill('5000');
    await form.locator('button[type=submit]').click();
    await expect(page.locator('[data-testid=confirm-dialog]').textContent()).resolves.toContain('5,000 USDC on Solana');
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: 'waits for an approver other than you' }).waitFor();
    const waiting = page.locator('[data-testid=withdrawals] tr', { has: page.locator('[data-approval=pending]') });
    await waiting.first().waitFor();
    withdrawalId = (await waiting.first().getAttribute('data-id')) ?? undefined;
    expect(withdrawalId).toMatch(/^pi_/);
    await expect(waiting.first().locator('[data-approval]').textContent()).resolves.toContain('requested by Ada Lovelace');

    // Its requester is not offered Approve (four-eyes), and is told why; Reject stays (a requester may withdraw it).
    await page.goto(`${admin}/console#/approvals`);
    const mine = row(page, withdrawalId!);
    await mine.waitFor();
    await expect(mine.locator('[data-testid=requested-by]').textContent()).resolves.toContain('Ada Lovelace');
    expect(await mine.locator('[data-action=approve]').count()).toBe(0);
    await expect(mine.locator('[data-testid=own-part]').textContent()).resolves.toContain('You requested it');
    await mine.locator('[data-action=reject]').waitFor();

    // A page that went stale: the admin gave the held payment its first approval elsewhere (another tab), then clicks
    // Approve here. The service refuses (403 SELF_APPROVAL) and the dialog says so, in words.
    const held = row(page, heldPaymentId);
    await expect(held.locator('[data-testid=approval-count]').textContent()).resolves.toBe('0 of 2');
    const elsewhere = await fetch(`${admin}/admin/payment_intents/${heldPaymentId}/approve`, {
      method: 'POST',
      headers: { authorization: `Bearer ${people.get('Ada Lovelace')!.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(elsewhere.status).toBe(200);
    await held.locator('[data-action=approve]').click();
    await page.locator('[data-testid=confirm]').click();
    const refusal = page.locator('[data-testid=confirm-dialog] .error-note[data-code=SELF_APPROVAL]');
    await expect(refusal.textContent()).resolves.toContain('another approver must');
    await page.getByRole('button', { name: 'Back' }).click();
    await page.locator('[data-testid=whoami] button', { hasText: 'Sign out' }).waitFor();

    await signOut(page);
    // Signed out, the page shows nothing but the sign-in form, even when reloaded.
    await page.reload();
    await page.locator('[data-testid=signin]').waitFor();
    await context.close();
  }, 90_000);

  it('an approver signs in, sees who requested the withdrawal, approves it; the held payment shows 1 of 2', async () => {
    const { context, page } = await freshPage();
    await page.goto(`${admin}/console#/approvals`);
    await signIn(page, 'Bob Approver');
    await expect(page.locator('[data-testid=whoami] .role').textContent()).resolves.toBe('approver');

    const withdrawal = row(page, withdrawalId!);
    await withdrawal.waitFor();
    expect(await withdrawal.getAttribute('data-kind')).toBe('withdrawal');
    await expect(withdrawal.locator('[data-testid=requested-by]').textContent()).resolves.toContain('Ada Lovelace');
    await expect(withdrawal.locator('[data-testid=approval-count]').textContent()).resolves.toBe('0 of 1');
    const held = row(page, heldPaymentId);
    await expect(held.locator('[data-testid=approval-count]').textContent()).resolves.toBe('1 of 2');
    await expect(held.textContent()).resolves.toContain('Ada Lovelace');
    await screenshot(page, 'approvals');

    await withdrawal.locator('[data-action=approve]').click();
    await expect(page.locator('[data-testid=confirm-dialog]').textContent()).resolves.toContain('Ada Lovelace');
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: `${withdrawalId} approved (1 of 1)` }).waitFor();
    await withdrawal.waitFor({ state: 'detached' });

    // The second of two approvals releases the held payment.
    await held.locator('[data-action=approve]').click();
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: `${heldPaymentId} approved (2 of 2)` }).waitFor();

    // The withdrawal's page: who requested it and who approved it; the workers send it now.
    await page.goto(`${admin}/console#/payments/${withdrawalId}`);
    const approval = page.locator('[data-testid=approval]');
    await expect(approval.locator('[data-testid=requested-by]').textContent()).resolves.toContain('Ada Lovelace');
    await expect(approval.locator('[data-testid=decided-by]').textContent()).resolves.toContain('Bob Approver');
    await page.locator('[data-testid=payment-summary] h1 [data-status]:not([data-status=route_selected])').waitFor({ timeout: 20_000 });
    await page.goto(`${admin}/console#/treasury`);
    await expect(page.locator(`[data-testid=withdrawals] tr[data-id="${withdrawalId}"] [data-approval=approved]`).textContent()).resolves.toMatch(
      /approved by Bob Approver.*requested by Ada Lovelace/,
    );
    // An approver is not offered a withdrawal of its own.
    expect(await page.locator('[data-testid=new-withdrawal]').count()).toBe(0);

    // The audit log names both, newest first; the refused self-approval stands out.
    await page.goto(`${admin}/console#/audit`);
    const audit = page.locator('[data-testid=audit]');
    await audit.waitFor();
    const actions = await audit.locator('tbody tr').evaluateAll((rows) =>
      rows.map((r) => [r.getAttribute('data-action'), r.querySelector('.who')?.textContent?.replace(' (you)', ''), r.querySelector('[data-outcome]')?.getAttribute('data-outcome')]),
    );
    const [create, selfApproval, approved] = [
      actions.findIndex(([a, who, o]) => a === 'withdrawal.create' && who === 'Ada Lovelace' && o === 'ok'),
      actions.findIndex(([a, who, o]) => a === 'payment.approve' && who === 'Ada Lovelace' && o === 'refused:SELF_APPROVAL'),
      actions.findIndex(([a, who, o]) => a === 'payment.approve' && who === 'Bob Approver' && o === 'ok'),
    ];
    expect([create, selfApproval, approved].every((i) => i >= 0), JSON.stringify(actions)).toBe(true);
    expect(approved).toBeLessThan(create);
    const seqs = await audit.locator('tbody tr').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-seq'))));
    expect(seqs.length).toBeGreaterThan(9);
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    await expect(audit.locator('tr.refused [data-outcome]').first().textContent()).resolves.toBe('refused: SELF_APPROVAL');
    await screenshot(page, 'audit');

    // Filtered by an operator's name: that operator's records only.
    await page.locator('[data-testid=audit-filters] input[name=actor]').fill('Ada Lovelace');
    await page.locator('[data-testid=audit-filters] button[type=submit]').click();
    await page.waitForURL(/actor=op_/);
    await audit.locator('tbody tr').first().waitFor();
    const actors = await audit.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-actor')));
    expect(new Set(actors)).toEqual(new Set([people.get('Ada Lovelace')!.id]));
    await context.close();
  }, 90_000);

  it('offers a viewer no action, and ends its session when its operator is disabled', async () => {
    // Something to act on: a withdrawal waiting for approval (route_selected, so also cancellable).
    const created = await fetch(`${admin}/admin/withdrawals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${people.get('Ada Lovelace')!.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chain: 'solana', to: SOL_ADDRESS, amount_usdc: '2500', idempotency_key: 'viewer-sees' }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;

    const { context, page } = await freshPage();
    await page.goto(`${admin}/console#/approvals`);
    await signIn(page, 'Vic Viewer');
    await expect(page.locator('[data-testid=whoami] .role').textContent()).resolves.toBe('viewer');
    await row(page, id).waitFor();
    expect(await page.locator('[data-action]').count()).toBe(0);
    await page.goto(`${admin}/console#/payments/${id}`);
    await page.locator('[data-testid=approval]').waitFor();
    await page.locator('[data-testid=no-permission]').waitFor();
    expect(await page.locator('[data-action]').count()).toBe(0);
    await page.goto(`${admin}/console#/treasury`);
    await page.locator(`[data-testid=withdrawals] tr[data-id="${id}"]`).waitFor();
    expect(await page.locator('[data-testid=new-withdrawal]').count()).toBe(0);
    expect(await page.locator('[data-action]').count()).toBe(0);
    await page.goto(`${admin}/console#/audit`);
    await page.locator('[data-testid=audit] tbody tr').first().waitFor();

    // Disabled: the next request is refused, and the console says the session ended.
    await disableOperator(db.pool, config, people.get('Vic Viewer')!.id, new Date(), setUp('operator.disable'));
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('[data-testid=signin-notice]', { hasText: 'session ended' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await context.close();
  }, 90_000);

  it('shows a payout batch held whole as one row, decided for all its payments (issue 35)', async () => {
    const { merchant, apiKey } = await createMerchant(db.pool, config, { name: 'Split Co', webhookUrl: null }, new Date(), setUp('merchant.create'));
    await updateMerchantPolicy(db.pool, config, merchant.id, { approvalAboveMicros: 10_000_000n }, new Date(), setUp('merchant.policy'));
    const items = [1, 2, 3].map((i) => ({ idempotency_key: `console-split-${i}`, amount_usd: 5, destination: { solana_address: SOL_ADDRESS }, priority: 'fast' }));
    const created = await fetch(`${publicUrl}/payout_batches`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ idempotency_key: 'console-split', items }),
    });
    expect(created.status).toBe(201);
    const batchId = ((await created.json()) as { id: string }).id;

    const { context, page } = await freshPage();
    await page.goto(`${admin}/console#/approvals`);
    await signIn(page, 'Bob Approver');
    const batch = row(page, batchId);
    await batch.waitFor();
    await expect(batch.textContent()).resolves.toContain('payout batch · 3 payments');
    await expect(batch.locator('[data-testid=approval-count]').textContent()).resolves.toBe('0 of 2');
    await batch.locator('[data-action=approve]').click();
    await expect(page.locator('[data-testid=confirm-dialog]').textContent()).resolves.toContain(`Payout batch ${batchId} · 3 payments`);
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: `${batchId} (3 payments): approval 1 of 2 recorded` }).waitFor();
    // The status line is written before the list is fetched again: wait for the row to show the new count.
    await expect.poll(() => batch.locator('[data-testid=approval-count]').textContent(), { timeout: 15_000 }).toBe('1 of 2');
    await signOut(page);
    await signIn(page, 'Ada Lovelace');
    await row(page, batchId).locator('[data-action=approve]').click();
    await page.locator('[data-testid=confirm]').click();
    await page.getByRole('status').filter({ hasText: `${batchId} (3 payments) approved (2 of 2)` }).waitFor();
    await row(page, batchId).waitFor({ state: 'detached' });
    await context.close();
  }, 90_000);

  it('fetched nothing from outside the service and raised no page error', () => {
    expect(problems.outside).toEqual([]);
    expect(problems.errors).toEqual([]);
  });
});
