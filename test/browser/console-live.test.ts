import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreams } from '../../src/server/index.js';
import {
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from '../server/support/server-harness.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

const pay = (invoice: string) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
});

if (!existsSync(CHROMIUM)) {
  describe('the live inbox in Chromium', () => {
    it.skip('chromium not installed at /usr/bin/chromium: skipped', () => {});
  });
} else {
  describe('the live inbox in Chromium', () => {
    let h: ServerHarness;
    let browser: Browser;
    const streams = new EventStreams({ pollMs: 100 });

    beforeAll(async () => {
      h = await serverHarness({ events: streams });
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      mkdirSync(ARTIFACTS, { recursive: true });
    });

    afterAll(async () => {
      await browser?.close();
      for (let i = 0; i < 100 && streams.open > 0; i++) await new Promise((r) => setTimeout(r, 20));
      await h?.close();
    });

    async function signIn(page: Page): Promise<void> {
      const op = h.tenants.acme.operators.approver;
      await page.goto(`${h.url}/`);
      await expect.poll(() => page.url()).toContain('/login');
      await page.getByLabel('Email').fill(op.email);
      await page.getByLabel('Password').fill(op.password);
      await Promise.all([
        page.waitForURL(`${h.url}/`),
        page.getByRole('button', { name: 'Sign in' }).click(),
      ]);
    }

    it('shows "1 new" in a polite live region when a proposal is posted through the API, without a reload', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (m) => {
        if (/Content Security Policy|Refused/i.test(m.text())) refused.push(m.text());
      });
      let loads = 0;
      page.on('load', () => loads++);
      await signIn(page);
      const region = page.getByTestId('live-inbox');
      expect(await region.getAttribute('aria-live')).toBe('polite');
      expect(await region.textContent()).toBe('');
      await expect.poll(() => streams.open).toBe(1);
      const loadsBefore = loads;

      const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      await expect.poll(() => region.textContent(), { timeout: 5000 }).toBe('1 new proposal — reload');
      expect(loads).toBe(loadsBefore);
      await page.screenshot({ path: join(ARTIFACTS, 'console-inbox-live.png') });
      await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      await expect.poll(() => region.textContent(), { timeout: 5000 }).toBe('2 new proposals — reload');

      await Promise.all([page.waitForEvent('load'), region.getByRole('link').click()]);
      expect(await page.locator(`a[href="/proposals/${proposed.id}"]`).count()).toBe(1);
      expect(await page.getByTestId('live-inbox').textContent()).toBe('');
      expect(refused).toEqual([]);
      await context.close();
      await expect.poll(() => streams.open).toBe(0);
    });

    it('works without JavaScript: the inbox lists the proposal and opens no stream', async () => {
      const context = await browser.newContext({ javaScriptEnabled: false });
      const page = await context.newPage();
      await signIn(page);
      const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
      await page.reload();
      expect(await page.locator(`a[href="/proposals/${proposed.id}"]`).count()).toBe(1);
      expect(await page.getByTestId('live-inbox').textContent()).toBe('');
      // With scripts on, the stream opens within milliseconds of the load; give it far longer.
      await new Promise((r) => setTimeout(r, 500));
      expect(streams.open).toBe(0);
      await context.close();
    });
  });
}
