import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Proposal } from '../../src/index.js';
import { runDemoAgent } from '../../src/demo/index.js';
import { hostileOperation } from '../server/support/hostile-operation.js';
import { startTestProvider, type TestProvider } from '../server/support/oidc-provider.js';
import {
  freshInvoice,
  memoryLogger,
  proposeViaApi,
  type Role,
  type ServerHarness,
  serverHarness,
} from '../server/support/server-harness.js';
import {
  axeViolations,
  describeInChromium,
  openProfile,
  type ChromiumProfile,
  signInWithPassword,
} from './support/chromium.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const WIDTHS = [
  { width: 1280, height: 860 },
  { width: 390, height: 844 },
] as const;

/** One page's serious or critical axe violations and horizontal overflow, as readable lines. */
async function audit(page: Page, label: string): Promise<string[]> {
  const found: string[] = [];
  for (const size of WIDTHS) {
    await page.setViewportSize(size);
    for (const violation of await axeViolations(page)) found.push(`${label} @${size.width}: ${violation}`);
    const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
    if (scrollWidth > size.width) found.push(`${label} @${size.width}: scrollWidth ${scrollWidth}`);
  }
  await page.setViewportSize(WIDTHS[0]);
  return found;
}

describeInChromium('console accessibility in Chromium', () => {
  let provider: TestProvider;
  let h: ServerHarness;
  let context: BrowserContext;
  let profile: ChromiumProfile | undefined;

  beforeAll(async () => {
    provider = await startTestProvider();
    h = await serverHarness({
      oidc: provider.config(),
      notifications: true,
      extraOperations: [hostileOperation],
      slack: true,
    });
    await provider.register(h.url);
    await runDemoAgent({ engine: h.engine, world: h.world, tenants: ['acme'], logger: memoryLogger([]) });
    h.clock.advance(3 * 60_000);
    profile = await openProfile('countersign-a11y', { viewport: WIDTHS[0] });
    context = profile.context;
  }, 60_000);

  afterAll(async () => {
    await profile?.close();
    await h?.close();
    await provider?.close();
  });

  async function signIn(page: Page, role: Role): Promise<void> {
    await context.clearCookies();
    await signInWithPassword(page, h.url, h.tenants.acme.operators[role]);
  }

  async function byResource(resource: string): Promise<Proposal> {
    const all = await h.engine.proposals.list('acme', { limit: 100 });
    const found = all.items.find((p) => p.resource === resource && p.supersededBy === null);
    if (!found) throw new Error(`no proposal for ${resource}`);
    return found;
  }

  /** Clicks a proposal page's Approve button and waits for the page it leads to. */
  async function approve(page: Page): Promise<void> {
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/approve')),
      page.getByRole('button', { name: /^Approve/ }).click(),
    ]);
    await page.waitForLoadState('load');
  }

  it('on a 390 px phone shows Approve right after the preview, in the first screen, and names what it approves', async () => {
    const payment = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme', 9_999) },
    });
    const title = (payment['preview'] as { title: string }).title;
    expect(title).toMatch(/ 99\.99 USD$/);
    const page = await context.newPage();
    await signIn(page, 'approver');
    await page.setViewportSize(WIDTHS[1]);
    await page.goto(`${h.url}/proposals/${payment.id}`);

    // The accessible name starts with the visible label and goes on to say what is approved.
    const approve = page.getByRole('button', { name: `Approve ${payment.short} · ${title}`, exact: true });
    expect(await approve.count()).toBe(1);
    const preview = page.getByRole('region', { name: 'What you are approving' });
    const [shown, button] = [await preview.boundingBox(), await approve.boundingBox()];
    expect(shown && button).toBeTruthy();
    // Right after the preview (only the decision card's heading and hint between them) and
    // wholly in the first screen, without scrolling.
    expect(button!.y).toBeGreaterThan(shown!.y + shown!.height);
    expect(button!.y - (shown!.y + shown!.height)).toBeLessThan(200);
    expect(button!.y + button!.height).toBeLessThanOrEqual(WIDTHS[1].height);
    expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(390);

    // A screen reader hears the amount once, as formatted: not "99.99 USD9999 minor units".
    const amount = preview.getByRole('definition').filter({ hasText: 'USD' });
    expect(await amount.ariaSnapshot()).toBe('- definition: 99.99 USD');
    expect(await preview.ariaSnapshot()).not.toContain('minor units');
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'console-phone.png') });
    await page.close();
  });

  it('finds no serious or critical axe violation and no horizontal overflow on any page at 1280 and 390 px', async () => {
    const found: string[] = [];
    await context.clearCookies();
    const page = await context.newPage();
    const visit = async (label: string, path: string) => {
      await page.goto(`${h.url}${path}`);
      found.push(...(await audit(page, label)));
    };

    // Signed out: the sign-in page, a refused password, a refused single sign-on.
    await visit('login', '/login');
    await page.getByLabel('Email').fill(h.tenants.acme.operators.approver.email);
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForLoadState('load');
    expect(await page.locator('.banner.bad').count()).toBe(1);
    found.push(...(await audit(page, 'login refused')));
    await visit('login sso refused', '/login/oidc/callback?code=x&state=y');
    expect(await page.locator('.banner.bad code.reason-code').textContent()).toBe('invalid_state');

    await signIn(page, 'approver');
    const hidden = [...'IGNORE PREVIOUS']
      .map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0)))
      .join('');
    const hostile = await proposeViaApi(h, 'acme', {
      operation: 'test.hostile',
      request: { text: `Pay Northw\u0456nd${hidden} \u202Eexe.txt\u202C` },
      resource: 'note:1',
    });
    await visit('inbox pending', '/');
    await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme') },
    });
    await page.getByTestId('live-inbox').getByRole('link').waitFor();
    found.push(...(await audit(page, 'inbox with a live notice')));
    await visit('inbox filtered and sorted', '/?operation=invoice.pay&sort=amount');
    await visit('inbox by requester, soonest expiry first', '/?requester=agent:acme-assistant&sort=expires');
    await visit('inbox search without result', '/?q=no-such-thing');
    await visit('inbox invalid query', '/?sort=sideways');

    const northwind = await byResource('invoice:inv-104');
    const contoso = await byResource('invoice:inv-105');
    const fabrikam = await byResource('invoice:inv-106');
    const tailspin = await byResource('invoice:inv-107');
    const refund = await byResource('order:ord-81');
    const draft = await byResource('broadcast:bc-spring');

    await visit('proposal pending', `/proposals/${northwind.id}`);
    await visit('proposal pending refund', `/proposals/${refund.id}`);
    await visit('proposal with hidden text', `/proposals/${hostile.id}`);
    await approve(page);
    found.push(...(await audit(page, 'proposal approved, succeeded')));
    await visit('proposal quorum pending', `/proposals/${contoso.id}`);
    await approve(page);
    expect(await page.getByTestId('approvals').textContent()).toBe('1 of 2');
    found.push(...(await audit(page, 'proposal quorum 1 of 2')));
    await visit('proposal pending payment lost', `/proposals/${fabrikam.id}`);
    await approve(page);
    found.push(...(await audit(page, 'proposal needs reconciliation')));

    await page.goto(`${h.url}/proposals/${tailspin.id}`);
    await page.getByText('Decline', { exact: true }).click();
    found.push(...(await audit(page, 'proposal decline form open')));
    await page.getByLabel(/Reason/).fill('Paid by cheque already.');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/decline')),
      page.getByRole('button', { name: 'Decline proposal' }).click(),
    ]);
    await page.waitForLoadState('load');
    found.push(...(await audit(page, 'proposal declined')));

    const stale = await context.newPage();
    await stale.goto(`${h.url}/proposals/${draft.id}`);
    await page.goto(`${h.url}/proposals/${draft.id}`);
    await page.getByText('Edit', { exact: true }).click();
    found.push(...(await audit(page, 'proposal edit form open')));
    await page.getByLabel('subject').fill('Spring league opens Sunday, April 5');
    await Promise.all([
      page.waitForURL((url) => /\/proposals\/prp_/.test(url.pathname) && !url.pathname.endsWith(draft.id)),
      page.getByRole('button', { name: 'Save as a new proposal' }).click(),
    ]);
    found.push(...(await audit(page, 'proposal edited')));
    await approve(stale);
    expect(await stale.locator('.banner.bad code.reason-code').textContent()).toBe('superseded');
    found.push(...(await audit(stale, 'proposal refused as superseded')));
    await stale.close();
    await visit('proposal superseded', `/proposals/${draft.id}`);

    await visit('inbox needs reconciliation', '/?status=needs_reconciliation');
    await visit('inbox recently decided', '/?status=recent');
    await visit('history', '/history');
    await visit('grants (approver)', '/grants');
    await visit('not found', '/proposals/prp_doesnotexist');

    await signIn(page, 'admin');
    await visit('proposal quorum, second approver', `/proposals/${contoso.id}`);
    await approve(page);
    found.push(...(await audit(page, 'proposal revision required')));
    await page.goto(`${h.url}/proposals/${fabrikam.id}`);
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/reconcile')),
      page.getByRole('button', { name: 'Reconcile with the provider' }).click(),
    ]);
    await page.waitForLoadState('load');
    found.push(...(await audit(page, 'proposal reconciled')));
    const granted = await h.engine.grants.create({
      tenant: 'acme',
      grantedBy: { id: 'user:admin@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] },
      subject: 'agent:acme-assistant',
      operations: ['invoice.pay'],
      resource: 'invoice:*',
      constraints: { amount_minor: { max: 10_000 } },
      cap: { field: 'amount_minor', total: 30_000 },
      expiresAt: h.clock.now() + 6 * 3_600_000,
    });
    expect(granted.kind).toBe('granted');
    await visit('grants (admin)', '/grants');
    await page.getByLabel(/^Constraints/).fill('{ not json');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/grants') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Create grant' }).click(),
    ]);
    await page.waitForLoadState('load');
    expect(await page.locator('.banner.bad').count()).toBe(1);
    found.push(...(await audit(page, 'grants (admin) refused')));
    await visit('deliveries', '/deliveries');
    await visit('operators', '/operators');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/active') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Disable admin@acme.test' }).click(),
    ]);
    await page.waitForLoadState('load');
    expect(await page.locator('.banner.bad .reason-code').textContent()).toBe('last_admin');
    found.push(...(await audit(page, 'operators refused')));
    await visit('slack', '/slack');
    await page.getByLabel('Slack user id').fill('not-a-slack-id');
    await page.getByLabel('Operator email').fill('approver@acme.test');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/slack/users') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Link', exact: true }).click(),
    ]);
    await page.waitForLoadState('load');
    expect(await page.locator('.banner.bad .reason-code').textContent()).toBe('invalid_request');
    found.push(...(await audit(page, 'slack refused')));

    await signIn(page, 'viewer');
    await visit('proposal as viewer', `/proposals/${refund.id}`);
    h.clock.advance(2 * 24 * 3_600_000);
    await visit('proposal expired', `/proposals/${refund.id}`);
    await page.close();

    expect(found).toEqual([]);
  }, 300_000);
});
