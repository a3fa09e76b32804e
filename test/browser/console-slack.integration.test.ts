import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Role, type ServerHarness, serverHarness } from '../server/support/server-harness.js';
import {
  axeViolations,
  type ChromiumProfile,
  describeInChromium,
  openProfile,
  signInWithPassword,
} from './support/chromium.js';

describeInChromium('the Slack admin page in Chromium', () => {
  let h: ServerHarness;
  let context: BrowserContext;
  let profile: ChromiumProfile | undefined;

  beforeAll(async () => {
    h = await serverHarness({ slack: true });
    profile = await openProfile('countersign-slack', { viewport: { width: 1280, height: 860 } });
    context = profile.context;
  }, 60_000);

  afterAll(async () => {
    await profile?.close();
    await h?.close();
  });

  async function signIn(page: Page, role: Role): Promise<void> {
    await context.clearCookies();
    await signInWithPassword(page, h.url, h.tenants.acme.operators[role]);
  }

  /** Submits the form `button` is in and waits for the page it leads to. */
  async function submit(page: Page, button: string): Promise<void> {
    await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes('/slack/users')),
      page.getByRole('button', { name: button, exact: true }).click(),
    ]);
    await page.waitForLoadState('load');
  }

  it('an admin links a Slack user through the form and removes the link; both audited; the page passes axe', async () => {
    const page = await context.newPage();
    await signIn(page, 'admin');
    await page.getByRole('link', { name: 'Slack' }).click();
    await page.waitForURL(`${h.url}/slack`);
    expect(await page.getByRole('heading', { name: 'Slack', level: 1 }).isVisible()).toBe(true);
    expect(await page.getByText('No links:').isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByLabel('Slack user id').fill('U0BROWSER1');
    await page.getByLabel('Operator email').fill('approver@acme.test');
    await submit(page, 'Link');
    expect(await page.getByRole('status').textContent()).toContain('Saved.');
    const links = page.getByRole('region', { name: 'Linked Slack users' });
    const row = links.getByRole('row').filter({ hasText: 'U0BROWSER1' });
    expect(await row.textContent()).toContain('approver@acme.test');
    expect(await row.textContent()).toContain('user:admin@acme.test');
    expect(await axeViolations(page)).toEqual([]);
    // On a 390 px phone the page does not widen: the table scrolls in its own region.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 860 });

    // A refusal shows on the page with its reason.
    await page.getByLabel('Slack user id').fill('U0BROWSER2');
    await page.getByLabel('Operator email').fill('nobody@acme.test');
    await submit(page, 'Link');
    const refusal = await page.getByRole('alert').textContent();
    expect(refusal).toContain('no operator of this tenant has that email');
    expect(refusal).toContain('not_found');
    expect(await axeViolations(page)).toEqual([]);

    await submit(page, 'Remove the link of U0BROWSER1');
    expect(await page.getByRole('status').textContent()).toContain('Saved.');
    expect(await page.getByText('No links:').isVisible()).toBe(true);
    const { events } = await h.engine.audit.since('acme', { afterSeq: 0, limit: 1000 });
    expect(
      events
        .filter((e) => e.detail['slackUser'] !== undefined)
        .map((e) => [e.step, e.actor, e.detail['operator'], e.detail['slackUser']]),
    ).toEqual([
      ['operator_changed', 'user:admin@acme.test', 'approver@acme.test', { id: 'U0BROWSER1', linked: true }],
      ['operator_changed', 'user:admin@acme.test', 'approver@acme.test', { id: 'U0BROWSER1', linked: false }],
    ]);
    await page.close();
  });

  it('is for admins only: an approver sees no Slack link and is refused the page', async () => {
    const page = await context.newPage();
    await signIn(page, 'approver');
    expect(await page.getByRole('link', { name: 'Slack' }).count()).toBe(0);
    const response = await page.goto(`${h.url}/slack`);
    expect(response?.status()).toBe(403);
    await page.close();
  });
});
