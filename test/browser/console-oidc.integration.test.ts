import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestProvider, type TestProvider } from '../server/support/oidc-provider.js';
import { type ServerHarness, serverHarness } from '../server/support/server-harness.js';
import { describeInChromium, openProfile, type ChromiumProfile } from './support/chromium.js';

describeInChromium('single sign-on in Chromium', () => {
  let provider: TestProvider;
  let h: ServerHarness;
  let context: BrowserContext;
  let profile: ChromiumProfile | undefined;

  beforeAll(async () => {
    // The provider on localhost, the console on 127.0.0.1: two sites, as in production, so
    // the provider's redirect back is a cross-site navigation.
    provider = await startTestProvider();
    h = await serverHarness({ oidc: provider.config() });
    await provider.register(h.url);
    provider.accounts.set('ada', { email: 'ada.sso@acme.test', tenant: 'acme', roles: ['approver'] });
    provider.accounts.set('nora', { email: 'nora@acme.test', tenant: 'acme', roles: ['intern'] });
    profile = await openProfile('countersign-chromium-oidc');
    context = profile.context;
  });

  afterAll(async () => {
    await profile?.close();
    await h?.close();
    await provider?.close();
  });

  it('signs in with SSO by clicking, lands in the inbox, and signs out at the provider', async () => {
    const page = await context.newPage();
    await page.goto(`${h.url}/`);
    await expect.poll(() => page.url()).toContain('/login');
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer, { waitUntil: 'commit' });
    await page.getByLabel('Account').fill('ada');
    await Promise.all([page.waitForURL(`${h.url}/`), page.getByRole('button', { name: 'Continue' }).click()]);
    // The SameSite=Strict session cookie came with the landing navigation: the inbox, signed in.
    await expect.poll(() => page.getByRole('heading', { name: 'Inbox' }).isVisible()).toBe(true);
    expect(await page.locator('.who .email').textContent()).toBe('ada.sso@acme.test');
    const cookies = await context.cookies(h.url);
    expect(cookies.find((c) => c.name === '__Host-countersign_session')).toMatchObject({
      httpOnly: true,
      secure: true,
      sameSite: 'Strict',
    });
    expect(cookies.find((c) => c.name === '__Host-countersign_oidc')).toBeUndefined();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer, { waitUntil: 'commit' });
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(`${h.url}/login`)),
      page.getByRole('button', { name: 'Yes, sign me out' }).click(),
    ]);
    await page.goto(`${h.url}/`);
    await expect.poll(() => page.url()).toContain('/login');
    await page.close();
  });

  it('shows a refused sign-in with its reason on the login page', async () => {
    await context.clearCookies();
    const page = await context.newPage();
    await page.goto(`${h.url}/login`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.waitForURL((url) => url.origin === provider.issuer, { waitUntil: 'commit' });
    await page.getByLabel('Account').fill('nora');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((url) => url.pathname === '/login/oidc/callback');
    await expect.poll(() => page.locator('.banner.bad code.reason-code').textContent()).toBe('forbidden');
    expect(await page.locator('.banner.bad').textContent()).toContain('no role in this console');
    await page.close();
  });
});
