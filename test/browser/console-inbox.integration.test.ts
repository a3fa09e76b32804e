import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, freshInvoice, type ServerHarness, serverHarness } from '../server/support/server-harness.js';
import {
  describeInChromium,
  openProfile,
  type ChromiumProfile,
  signInWithPassword,
} from './support/chromium.js';

describeInChromium('the inbox in Chromium', () => {
  let h: ServerHarness;
  let context: BrowserContext;
  let profile: ChromiumProfile | undefined;
  const ids: string[] = [];
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    h = await serverHarness();
    const token = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'keys' });
    for (const minor of [500, 90_000, 7_000]) {
      const response = await call(h, 'POST', '/api/v1/proposals', {
        token,
        body: {
          runId: 'run-keys',
          operation: 'invoice.pay',
          request: { invoice_id: freshInvoice(h.world, 'acme', minor) },
        },
      });
      ids.push((response.body as { id: string }).id);
      h.clock.advance(60_000);
    }
    // Someone else's proposal, which the requester filter leaves out.
    await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: {
        runId: 'run-other',
        operation: 'invoice.pay',
        request: { invoice_id: freshInvoice(h.world, 'acme') },
      },
    });
    profile = await openProfile('countersign-inbox', { viewport: { width: 1280, height: 860 } });
    context = profile.context;
  }, 60_000);

  afterAll(async () => {
    await profile?.close();
    await h?.close();
  });

  async function signIn(page: Page): Promise<void> {
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    await signInWithPassword(page, h.url, h.tenants.acme.operators.approver);
  }

  const current = (page: Page) => page.locator('tr[data-current] a[data-open]').getAttribute('href');

  it('filters and sorts through the form into the URL, then moves with j/k, shows help with ? and opens with o', async () => {
    const page = await context.newPage();
    await signIn(page);
    await page.getByLabel('Operation').selectOption('invoice.pay');
    await page.getByLabel('Requested by').fill('agent:acme-keys');
    await page.getByLabel('Sort').selectOption('amount');
    await Promise.all([page.waitForURL(/sort=amount/), page.getByRole('button', { name: 'Apply' }).click()]);
    const url = new URL(page.url());
    expect(url.searchParams.get('operation')).toBe('invoice.pay');
    expect(url.searchParams.get('requester')).toBe('agent:acme-keys');
    const listed = await page.$$eval('tr[data-inbox-row] a[data-open]', (links) =>
      links.map((a) => a.getAttribute('href')),
    );
    // Largest amount first: 900.00, 70.00, 5.00 USD.
    expect(listed).toEqual([ids[1], ids[2], ids[0]].map((id) => `/proposals/${id}`));
    expect(await page.getByTestId('tab-pending').textContent()).toMatch(/Pending\s+3/);

    await page.locator('h1').click();
    await page.keyboard.press('j');
    expect(await current(page)).toBe(`/proposals/${ids[1]}`);
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    expect(await current(page)).toBe(`/proposals/${ids[0]}`);
    await page.keyboard.press('k');
    expect(await current(page)).toBe(`/proposals/${ids[2]}`);
    // The selected row's link has the focus, so Enter opens it as any link does.
    expect(await page.locator('a[data-open]:focus').getAttribute('href')).toBe(`/proposals/${ids[2]}`);

    const help = page.getByRole('region', { name: 'Keyboard shortcuts' });
    expect(await help.isVisible()).toBe(false);
    await page.keyboard.press('?');
    expect(await help.isVisible()).toBe(true);
    await page.keyboard.press('Escape');
    expect(await help.isVisible()).toBe(false);

    await Promise.all([page.waitForURL(`${h.url}/proposals/${ids[2]}`), page.keyboard.press('o')]);
    // Opening is all a key does: the proposal is still pending until its button is pressed.
    expect((await h.engine.proposals.get('acme', ids[2]!))?.status).toBe('pending');
    await page.goBack();
    await page.locator('h1').click();
    await page.keyboard.press('j');
    await Promise.all([page.waitForURL(`${h.url}/proposals/${ids[1]}`), page.keyboard.press('Enter')]);
    expect((await h.engine.proposals.get('acme', ids[1]!))?.status).toBe('pending');

    // Keys typed into the search box are text, not shortcuts.
    await page.goto(`${h.url}/`);
    await page.getByLabel('Search').pressSequentially('jk?o');
    expect(await page.getByLabel('Search').inputValue()).toBe('jk?o');
    expect(await page.getByRole('region', { name: 'Keyboard shortcuts' }).isVisible()).toBe(false);
    expect(page.url()).toBe(`${h.url}/`);
    expect(consoleErrors.filter((e) => /Content Security Policy|Refused/.test(e))).toEqual([]);
    await page.close();
  }, 60_000);

  it('opens on "Needs you"; a first approval of two takes it out of there and Pending marks it "You approved (1 of 2)"', async () => {
    const token = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'quorum' });
    const response = await call(h, 'POST', '/api/v1/proposals', {
      token,
      body: {
        runId: 'run-quorum',
        operation: 'invoice.pay',
        request: { invoice_id: freshInvoice(h.world, 'acme', 1_250_000) },
      },
    });
    const big = response.body as { id: string; short: string };
    const page = await context.newPage();
    await page.goto(`${h.url}/?requester=agent%3Aacme-quorum`);
    expect(await page.getByTestId('tab-needs').getAttribute('aria-current')).toBe('page');
    expect(await page.getByTestId('tab-needs').textContent()).toMatch(/Needs you\s+1/);
    await Promise.all([
      page.waitForURL(`${h.url}/proposals/${big.id}`),
      page.locator(`a[href="/proposals/${big.id}"]`).click(),
    ]);
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/proposals/${big.id}/approve`)),
      page.getByRole('button', { name: new RegExp(`^Approve ${big.short}`) }).click(),
    ]);
    await page.goto(`${h.url}/?requester=agent%3Aacme-quorum`);
    expect(await page.getByTestId('inbox-summary').textContent()).toBe(
      '0 proposals matching the filters need your decision.',
    );
    expect(await page.locator(`a[href="/proposals/${big.id}"]`).count()).toBe(0);
    await Promise.all([page.waitForURL(/status=pending/), page.getByTestId('tab-pending').click()]);
    const mark = page.locator('tr[data-inbox-row]', {
      has: page.locator(`a[href="/proposals/${big.id}"]`),
    });
    expect(await mark.getByTestId('your-part').textContent()).toBe(
      'You approved (1 of 2) · waiting for another approver',
    );
    expect(await mark.getByTestId('approvals').textContent()).toBe('1 of 2 approvals');
    await page.close();
  }, 60_000);
});
