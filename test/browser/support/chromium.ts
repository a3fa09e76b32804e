import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AxeResults } from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';

/** Debian's Chromium, which playwright-core drives (`apt-get install -y chromium`). */
export const CHROMIUM = '/usr/bin/chromium';

const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];

/**
 * A describe block that runs in Chromium, or a single skipped test saying why where it is not
 * installed (a user's machine without it still runs everything else).
 */
export function describeInChromium(name: string, body: () => void): void {
  if (existsSync(CHROMIUM)) {
    describe(name, body);
    return;
  }
  describe(name, () => {
    it.skip(`chromium not installed at ${CHROMIUM}: skipped`, () => {});
  });
}

/** A browser whose contexts are separate profiles in memory (several signed-in users at once). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
}

/** One persistent profile in a fresh temporary folder; `close` ends it and removes the folder. */
export interface ChromiumProfile {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** Opens a {@link ChromiumProfile}, named `prefix` in the temporary folder. */
export async function openProfile(
  prefix: string,
  options: { readonly viewport?: { readonly width: number; readonly height: number } } = {},
): Promise<ChromiumProfile> {
  const folder = mkdtempSync(join(tmpdir(), `${prefix}-`));
  const context = await chromium.launchPersistentContext(folder, {
    executablePath: CHROMIUM,
    headless: true,
    ...(options.viewport ? { viewport: options.viewport } : {}),
    args: ARGS,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Signs in on the console's password form at `url` and waits for the page it lands on (the
 * inbox unless `landing` says otherwise).
 */
export async function signInWithPassword(
  page: Page,
  url: string,
  operator: { readonly email: string; readonly password: string },
  landing = `${url}/`,
): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('Email').fill(operator.email);
  await page.getByLabel('Password').fill(operator.password);
  await Promise.all([page.waitForURL(landing), page.getByRole('button', { name: 'Sign in' }).click()]);
}

/**
 * Waits until the inbox's live stream on `page` is open: the server sends only what happens after
 * that, so a test that posts a proposal before it would wait for an event the tab never gets.
 */
export async function liveInboxOpen(page: Page): Promise<void> {
  await expect.poll(() => page.getByTestId('live-inbox').getAttribute('data-live')).toBe('open');
}

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The serious or critical axe violations of what `page` shows now, as readable lines. */
export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated over the DevTools protocol, which the page's CSP does not govern.
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(AXE);
  const results = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run(o: object): Promise<AxeResults> } }).axe.run({
      resultTypes: ['violations'],
    }),
  );
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}) ${v.nodes.map((n) => n.target.join(' ')).join(' | ')}`);
}
