// What the browser tests share (decision 115): Debian's Chromium driven by playwright-core, where the screenshots go,
// and a watch on every page that records any request to another origin and any page error, so a test can fail on them.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const SCREENSHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
export const LAUNCH_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const VIEWPORT = { width: 1440, height: 900 };

/** Fails loudly, never skips: CI installs the package (.ci/run), and a developer gets told how. */
export async function requireChromium(): Promise<void> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium)`);
  await mkdir(SCREENSHOTS, { recursive: true });
}

export interface PageProblems {
  /** Requests that left for another origin. */
  outside: string[];
  /** Uncaught errors, and console errors other than the expected refusals. */
  errors: string[];
}

/**
 * Watches `page`: requests to origins other than `origins`, uncaught errors, console errors. Chromium logs every
 * answered 4xx as a console error; `expectedStatuses` are refusals the page shows on purpose (a wrong token, a
 * SELF_APPROVAL, a chain that says no), anything else is a defect.
 */
export function watchPage(page: Page, origins: readonly string[], problems: PageProblems, expectedStatuses: readonly number[]): void {
  const allowed = new Set(origins.map((o) => new URL(o).origin));
  const expected = new RegExp(`status of (${expectedStatuses.join('|')})\\b`);
  page.on('request', (request) => {
    const url = new URL(request.url());
    if (!allowed.has(url.origin) && url.protocol !== 'data:') problems.outside.push(request.url());
  });
  page.on('pageerror', (error) => problems.errors.push(`${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && !(expectedStatuses.length > 0 && expected.test(message.text()))) problems.errors.push(`${page.url()}: ${message.text()}`);
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: false });
}
