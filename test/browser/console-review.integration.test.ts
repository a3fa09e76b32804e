import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { reviewOperation } from '../server/support/review-operation.js';
import { proposeViaApi, type ServerHarness, serverHarness } from '../server/support/server-harness.js';
import { describeInChromium, openProfile, type ChromiumProfile } from './support/chromium.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');

describeInChromium('the review page in Chromium', () => {
  let h: ServerHarness;
  let context: BrowserContext;
  let profile: ChromiumProfile | undefined;

  beforeAll(async () => {
    h = await serverHarness({ extraOperations: [reviewOperation] });
    profile = await openProfile('countersign-review', { viewport: { width: 1280, height: 860 } });
    context = profile.context;
  }, 60_000);

  afterAll(async () => {
    await profile?.close();
    await h?.close();
  });

  it('edits a payout and sees old → new for each changed field, redacted, and the way back', async () => {
    const p = await proposeViaApi(h, 'acme', {
      operation: 'payout.send',
      request: { payee: 'Northwind', account: 'acct-supplier-7', amount_minor: 4_000 },
    });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    const op = h.tenants.acme.operators.approver;
    await page.goto(`${h.url}/proposals/${p.id}`);
    await page.getByLabel('Email').fill(op.email);
    await page.getByLabel('Password').fill(op.password);
    await Promise.all([
      page.waitForURL(`${h.url}/proposals/${p.id}`),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    await page.getByText('Edit', { exact: true }).click();
    await page.getByLabel('Account').fill('acct-personal-2');
    await page.getByLabel('Amount minor').fill('40000');
    await Promise.all([
      page.waitForURL((url) => url.pathname.startsWith('/proposals/') && !url.pathname.endsWith(p.id)),
      page.getByRole('button', { name: 'Save as a new proposal' }).click(),
    ]);

    const changes = page.getByTestId('edit-changes');
    await expect
      .poll(() => changes.getByRole('heading', { name: 'Changed by this edit' }).isVisible())
      .toBe(true);
    const account = changes.locator('tr[data-field="account"]');
    expect(await account.locator('td.old').textContent()).toBe('…er-7');
    expect(await account.locator('td.new').textContent()).toBe('…al-2');
    const amount = changes.locator('tr[data-field="amount_minor"]');
    // Declared money: shown in its currency, the minor units beside it.
    expect(await amount.locator('td.old').textContent()).toBe('40.00 USD 4000 minor units');
    expect(await amount.locator('td.new').textContent()).toBe('400.00 USD 40000 minor units');
    expect(await changes.textContent()).not.toContain('acct-');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'console-edit-diff.png'), fullPage: true });

    // Back to the predecessor, which links forward to the edit and shows the same changes.
    const editUrl = page.url();
    await Promise.all([
      page.waitForURL(`${h.url}/proposals/${p.id}`),
      changes.getByRole('link', { name: p.id }).click(),
    ]);
    const forward = page.getByTestId('superseded-by').getByRole('link');
    expect(`${h.url}${await forward.getAttribute('href')}`).toBe(editUrl);
    expect(
      await page.getByTestId('edit-changes').locator('tr[data-field="account"] td.new').textContent(),
    ).toBe('…al-2');
    expect(errors).toEqual([]);
  });
});
