import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { EventStreams } from '../../src/server/index.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from '../server/support/server-harness.js';
import { describeInChromium, launchChromium, signInWithPassword, liveInboxOpen } from './support/chromium.js';

const ARTIFACTS = join(process.cwd(), 'test-artifacts');

const pay = (invoice: string) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
});

describeInChromium('the live inbox in Chromium', () => {
  let h: ServerHarness;
  let browser: Browser;
  const streams = new EventStreams({ pollMs: 100 });

  beforeAll(async () => {
    h = await serverHarness({ events: streams });
    browser = await launchChromium();
    mkdirSync(ARTIFACTS, { recursive: true });
  });

  afterAll(async () => {
    await browser?.close();
    for (let i = 0; i < 100 && streams.open > 0; i++) await new Promise((r) => setTimeout(r, 20));
    await h?.close();
  });

  // A failed test must not leave its streams open for the next one to count.
  afterEach(async () => {
    for (const context of browser.contexts()) await context.close();
    await streamsOpen(0);
  });

  /** The server notices a closed tab when its socket closes: seconds, on a loaded machine. */
  async function streamsOpen(count: number): Promise<void> {
    await expect.poll(() => streams.open, { timeout: 15_000 }).toBe(count);
  }

  async function signIn(page: Page): Promise<void> {
    await signInWithPassword(page, h.url, h.tenants.acme.operators.approver);
  }

  /** An agent of acme of its own, so a page filtered on it lists only its proposals. */
  async function agentOf(name: string) {
    const token = await h.directory.issueAgentToken({ tenant: 'acme', agent: name });
    return {
      id: `agent:acme-${name}`,
      pay: async (dueMinor = 24_049) => {
        const response = await call(h, 'POST', '/api/v1/proposals', {
          token,
          body: { runId: `run-${name}`, ...pay(freshInvoice(h.world, 'acme', dueMinor)) },
        });
        expect(response.status).toBe(201);
        return response.body as { id: string; digest: string };
      },
    };
  }

  it('a filtered inbox counts only the new proposals its filter would list', async () => {
    const filtered = await agentOf('filtered');
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${h.url}/?requester=${encodeURIComponent(filtered.id)}`);
    const region = page.getByTestId('live-inbox');
    await liveInboxOpen(page);
    await streamsOpen(1);
    await filtered.pay();
    await expect.poll(() => region.getAttribute('data-checked')).toBe('1');
    // Another agent's proposal is not in this list: looked at, not counted.
    await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    await expect.poll(() => region.getAttribute('data-checked')).toBe('2');
    expect(await region.textContent()).toBe('1 new proposal in this list — reload');
    await filtered.pay();
    await expect.poll(() => region.getAttribute('data-checked')).toBe('3');
    expect(await region.textContent()).toBe('2 new proposals in this list — reload');
    await context.close();
    await streamsOpen(0);
  });

  it('a row decided elsewhere leaves "Needs you", and so does one this approver approved in another tab', async () => {
    const gone = await agentOf('gone');
    const declined = await gone.pay();
    const big = await gone.pay(1_250_000);
    const kept = await gone.pay();
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${h.url}/?requester=${encodeURIComponent(gone.id)}`);
    await liveInboxOpen(page);
    await streamsOpen(1);
    const rows = () =>
      page.locator('[data-inbox-row]').evaluateAll((r) => r.map((e) => e.getAttribute('data-proposal-id')));
    expect(await rows()).toEqual([kept.id, big.id, declined.id]);
    const region = page.getByTestId('live-inbox');
    // Another approver declines one.
    const decline = await call(h, 'POST', `/api/v1/proposals/${declined.id}/decline`, {
      token: h.tenants.acme.operators.admin.token,
      body: { reason: 'duplicate' },
    });
    expect(decline.status).toBe(200);
    await expect.poll(rows).toEqual([kept.id, big.id]);
    expect(await region.textContent()).toBe('1 proposal was decided elsewhere and left this list — reload');
    // This approver gives 1 of 2 elsewhere (their API token, another tab): no longer theirs.
    const approve = await call(h, 'POST', `/api/v1/proposals/${big.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: big.digest },
    });
    expect(approve.status).toBe(202);
    await expect.poll(rows).toEqual([kept.id]);
    expect(await region.textContent()).toBe('2 proposals were decided elsewhere and left this list — reload');
    await context.close();
    await streamsOpen(0);
  });

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
    await liveInboxOpen(page);
    await streamsOpen(1);
    const loadsBefore = loads;

    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    await expect.poll(() => region.textContent()).toBe('1 new proposal in this list — reload');
    expect(loads).toBe(loadsBefore);
    await page.screenshot({ path: join(ARTIFACTS, 'console-inbox-live.png') });
    await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    await expect.poll(() => region.textContent()).toBe('2 new proposals in this list — reload');

    await Promise.all([page.waitForEvent('load'), region.getByRole('link').click()]);
    expect(await page.locator(`a[href="/proposals/${proposed.id}"]`).count()).toBe(1);
    expect(await page.getByTestId('live-inbox').textContent()).toBe('');
    expect(refused).toEqual([]);
    await context.close();
    await streamsOpen(0);
  });

  it('a refused stream says so in an alert: too many tabs (429), then signed out (401)', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await liveInboxOpen(page);
    await streamsOpen(1);
    // Four more streams of the same principal (its API token) fill its five slots.
    const held = await Promise.all(
      [1, 2, 3, 4].map(async () => {
        const abort = new AbortController();
        const response = await fetch(`${h.url}/api/v1/events`, {
          headers: { authorization: `Bearer ${h.tenants.acme.operators.approver.token}` },
          signal: abort.signal,
        });
        expect(response.status).toBe(200);
        return abort;
      }),
    );
    const sixth = await context.newPage();
    await sixth.goto(`${h.url}/`);
    const alert = sixth.getByRole('alert').filter({ hasText: 'Live updates' });
    await expect
      .poll(() => alert.textContent())
      .toContain('Live updates are off: you have the most live streams open');
    expect(await sixth.getByTestId('live-refused').isVisible()).toBe(true);
    await sixth.screenshot({ path: join(ARTIFACTS, 'console-inbox-live-refused.png') });
    for (const abort of held) abort.abort();
    await sixth.close();
    await liveInboxOpen(page);
    await streamsOpen(1);
    // Signed out in another tab: the open stream ends, its reconnect is refused 401.
    const other = await context.newPage();
    await other.goto(`${h.url}/history`);
    await Promise.all([other.waitForURL(/\/login/), other.getByRole('button', { name: 'Sign out' }).click()]);
    const signedOut = page.getByRole('alert').filter({ hasText: 'Live updates' });
    await expect
      .poll(() => signedOut.textContent(), { timeout: 15_000 })
      .toContain('Live updates stopped: you are signed out.');
    await context.close();
    await streamsOpen(0);
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
