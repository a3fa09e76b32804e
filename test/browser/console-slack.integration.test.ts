import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { serverHarness } from '../server/support/server-harness.js';
import { axeViolations, describeInChromium } from './support/chromium.js';
import { consoleInChromium } from './support/console-in-chromium.js';

describeInChromium('the Slack admin page in Chromium', () => {
  const s = consoleInChromium('countersign-slack', () => serverHarness({ slack: true }));
  const submit = (page: Page, button: string) => s.submit(page, button, '/slack/users');

  it('an admin links a Slack user through the form and removes the link; both audited; the page passes axe', async () => {
    const page = await s.context.newPage();
    await s.signIn(page, 'admin');
    await page.getByRole('link', { name: 'Slack' }).click();
    await page.waitForURL(`${s.h.url}/slack`);
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
    const { events } = await s.h.engine.audit.since('acme', { afterSeq: 0, limit: 1000 });
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
    const page = await s.context.newPage();
    await s.signIn(page, 'approver');
    expect(await page.getByRole('link', { name: 'Slack' }).count()).toBe(0);
    const response = await page.goto(`${s.h.url}/slack`);
    expect(response?.status()).toBe(403);
    await page.close();
  });
});
