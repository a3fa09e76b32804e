import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LoginLimit } from '../../src/server/index.js';
import { ConsoleClient, hidden } from './support/console-client.js';
import { type ServerHarness, serverHarness } from './support/server-harness.js';

// Counts every password check (one scrypt each) the server makes, whatever calls it.
const checks = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/server/directory/password.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/server/directory/password.js')>();
  return {
    ...actual,
    verifyPassword: (password: string, stored: string) => {
      checks.count++;
      return actual.verifyPassword(password, stored);
    },
  };
});

const DEVICE = '__Host-countersign_device';
const harnesses: ServerHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function server(loginLimit: LoginLimit): Promise<ServerHarness> {
  const h = await serverHarness({ directory: { loginLimit } });
  harnesses.push(h);
  return h;
}

/** A refused sign-in: 429, the `rate_limited` reason code on the page, and a Retry-After in seconds. */
function expectRateLimited(r: { status: number; html: string; response: Response }): void {
  expect(r.status).toBe(429);
  expect(/<code class="reason-code">([^<]*)<\/code>/.exec(r.html)?.[1]).toBe('rate_limited');
  expect(Number(r.response.headers.get('retry-after'))).toBeGreaterThan(0);
}

/** A browser that has signed `email` in once (and out again): it holds a trusted-device cookie. */
async function trustedBrowser(h: ServerHarness, email: string, password: string): Promise<ConsoleClient> {
  const browser = new ConsoleClient(h.url);
  expect((await browser.login(email, password)).status).toBe(303);
  expect(browser.cookies.get(DEVICE)).toMatch(/^cs_dev_[A-Za-z0-9_-]{43}$/);
  expect((await browser.post('/logout', { csrf: await browser.csrf() })).status).toBe(303);
  return browser;
}

describe('login limiting over HTTP', () => {
  it('400 concurrent wrong guesses at one account: only the limit (5) reach the password check, the rest are 429 rate_limited', async () => {
    const h = await server({ perAccount: 5, perClient: 10_000, windowMs: 15 * 60_000 });
    const victim = h.tenants.acme.operators.approver;
    const attacker = new ConsoleClient(h.url);
    const csrf = hidden((await attacker.get('/login')).html, 'csrf');
    checks.count = 0;
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        attacker.post('/login', { csrf, email: victim.email, password: `guess number ${i}` }),
      ),
    );
    expect(checks.count).toBe(5);
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    const refused = results.filter((r) => r.status !== 401);
    expect(refused).toHaveLength(395);
    for (const r of refused) expectRateLimited(r);
    // The account stays limited for untrusted browsers, even with the right password, and that
    // refusal checks no password either.
    expectRateLimited(await attacker.login(victim.email, victim.password));
    expect(checks.count).toBe(5);
  });

  it('an attacker who knows an operator’s email cannot lock out the operator’s trusted browser, and stays limited', async () => {
    const h = await server({ perAccount: 5, perClient: 10_000, windowMs: 15 * 60_000 });
    const victim = h.tenants.acme.operators.approver;
    const own = h.tenants.acme.operators.viewer;
    const operator = await trustedBrowser(h, victim.email, victim.password);
    // The attacker is an operator too: their browser holds a device cookie, for their own email.
    const attacker = await trustedBrowser(h, own.email, own.password);
    for (let i = 0; i < 5; i++)
      expect((await attacker.login(victim.email, `guess number ${i}`)).status).toBe(401);
    expectRateLimited(await attacker.login(victim.email, 'guess number 5'));

    const back = await operator.login(victim.email, victim.password);
    expect(back.status).toBe(303);
    expect(back.location).toBe('/');

    // The operator's success frees nothing for anyone else: the attacker's browser and any
    // other browser without this operator's device cookie stay limited for the window.
    expectRateLimited(await attacker.login(victim.email, 'guess number 6'));
    expectRateLimited(await new ConsoleClient(h.url).login(victim.email, 'guess number 7'));
    h.clock.advance(15 * 60_000);
    expect((await attacker.login(victim.email, 'guess number 8')).status).toBe(401);
  });

  it('failures from a shared proxy address do not stop a trusted browser behind it; the address stays limited', async () => {
    // Every client of this test is 127.0.0.1: one address, as behind one proxy.
    const h = await server({ perAccount: 5, perClient: 8, windowMs: 15 * 60_000 });
    const victim = h.tenants.acme.operators.approver;
    const operator = await trustedBrowser(h, victim.email, victim.password);
    const attacker = new ConsoleClient(h.url);
    for (let i = 0; i < 8; i++)
      expect((await attacker.login(`someone-${i}@acme.test`, 'a guessed password')).status).toBe(401);
    expectRateLimited(await attacker.login('someone-else@acme.test', 'a guessed password'));
    expectRateLimited(await attacker.login(victim.email, 'a guessed password'));
    expectRateLimited(await new ConsoleClient(h.url).login(victim.email, victim.password));

    expect((await operator.login(victim.email, victim.password)).status).toBe(303);
    expectRateLimited(await attacker.login('someone-0@acme.test', 'a guessed password'));
  });

  it('a trusted browser that guesses wrong is limited on its own; the operator’s other trusted browser is not', async () => {
    const h = await server({ perAccount: 5, perClient: 10_000, windowMs: 15 * 60_000 });
    const victim = h.tenants.acme.operators.approver;
    const stolen = await trustedBrowser(h, victim.email, victim.password);
    const laptop = await trustedBrowser(h, victim.email, victim.password);
    checks.count = 0;
    for (let i = 0; i < 5; i++)
      expect((await stolen.login(victim.email, `guess number ${i}`)).status).toBe(401);
    expectRateLimited(await stolen.login(victim.email, victim.password));
    expect(checks.count).toBe(5);
    expect((await laptop.login(victim.email, victim.password)).status).toBe(303);
  });

  it('sets the device cookie like the session cookie, rotates it at every sign-in, and no longer trusts the old one', async () => {
    const h = await server({ perAccount: 2, perClient: 10_000, windowMs: 15 * 60_000 });
    const op = h.tenants.globex.operators.admin;
    const browser = new ConsoleClient(h.url);
    const first = await browser.login(op.email, op.password);
    const cookie = first.response.headers.getSetCookie().find((c) => c.startsWith(`${DEVICE}=`));
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).toMatch(/Max-Age=2592000/);
    expect(cookie).not.toMatch(/Domain=/i);
    const old = browser.cookies.get(DEVICE)!;
    await browser.post('/logout', { csrf: await browser.csrf() });
    expect((await browser.login(op.email, op.password)).status).toBe(303);
    expect(browser.cookies.get(DEVICE)).not.toBe(old);

    // Someone holding the old cookie is an untrusted browser: the account's limit applies.
    const copy = new ConsoleClient(h.url);
    copy.cookies.set(DEVICE, old);
    for (let i = 0; i < 2; i++) expect((await copy.login(op.email, `guess number ${i}`)).status).toBe(401);
    expectRateLimited(await copy.login(op.email, op.password));
    await browser.post('/logout', { csrf: await browser.csrf() });
    expect((await browser.login(op.email, op.password)).status).toBe(303);
  });
});
