import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Role, ServerHarness } from '../../server/support/server-harness.js';
import { type ChromiumProfile, openProfile, signInWithPassword } from './chromium.js';

/** A server and a Chromium profile shared by one describe block's tests. */
export interface ConsoleInChromium {
  /** The server (set once the block's `beforeAll` ran). */
  readonly h: ServerHarness;
  /** The profile's browser context. */
  readonly context: BrowserContext;
  /** Signs `page` in as tenant acme's operator of `role`, with the profile's cookies cleared first. */
  signIn(page: Page, role: Role): Promise<void>;
  /** Clicks the button named exactly `button` and waits for its POST (to a URL containing `path`) and the page it leads to. */
  submit(page: Page, button: string, path: string): Promise<void>;
}

/**
 * Registers, in the calling describe block, a `beforeAll` that starts `start()`'s server and a
 * 1280 × 860 profile named `prefix`, and an `afterAll` that closes both.
 */
export function consoleInChromium(prefix: string, start: () => Promise<ServerHarness>): ConsoleInChromium {
  let h: ServerHarness | undefined;
  let profile: ChromiumProfile | undefined;
  beforeAll(async () => {
    h = await start();
    profile = await openProfile(prefix, { viewport: { width: 1280, height: 860 } });
  }, 60_000);
  afterAll(async () => {
    await profile?.close();
    await h?.close();
  });
  const started = () => {
    if (!h || !profile) throw new Error('the server and browser start in beforeAll');
    return { h, context: profile.context };
  };
  return {
    get h() {
      return started().h;
    },
    get context() {
      return started().context;
    },
    signIn: async (page, role) => {
      const { h, context } = started();
      await context.clearCookies();
      await signInWithPassword(page, h.url, h.tenants.acme.operators[role]);
    },
    submit: async (page, button, path) => {
      await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST' && r.url().includes(path)),
        page.getByRole('button', { name: button, exact: true }).click(),
      ]);
      await page.waitForLoadState('load');
    },
  };
}
