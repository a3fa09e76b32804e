import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/canonical/errors.js';
import { sealValue } from '../../src/server/auth/sealed-value.js';
import { oidcCookieKey } from '../../src/server/console/oidc-cookie.js';
import { checkOidcConfig, createCountersignApp } from '../../src/server/index.js';
import { PrincipalDirectory } from '../../src/server/index.js';
import { hidden } from './support/console-client.js';
import { authorizeAt, CookieBrowser, startTestProvider, type TestProvider } from './support/oidc-provider.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

const SESSION = '__Host-countersign_session';
const TRANSACTION = '__Host-countersign_oidc';

function reasonOf(html: string): string | undefined {
  return /class="reason-code">([^<]+)</.exec(html)?.[1];
}

describe('console single sign-on against a real OpenID provider', () => {
  let provider: TestProvider;
  let h: ServerHarness;

  beforeAll(async () => {
    provider = await startTestProvider();
    h = await serverHarness({ oidc: provider.config() });
    await provider.register(h.url);
    provider.accounts.set('ada', {
      email: 'ada.sso@acme.test',
      tenant: 'acme',
      roles: ['approver', 'auditor'],
    });
    provider.accounts.set('mallory', {
      email: 'mallory@initech.test',
      tenant: 'initech',
      roles: ['approver'],
    });
    provider.accounts.set('nora', { email: 'nora@acme.test', tenant: 'acme', roles: ['intern'] });
    provider.accounts.set('tom', { email: 'tom@acme.test', roles: ['approver'] });
    provider.accounts.set('squatter', { email: 'approver@acme.test', tenant: 'acme', roles: ['admin'] });
    provider.accounts.set('vic', { email: 'vic@globex.test', tenant: 'globex', roles: ['viewer'] });
  });

  afterAll(async () => {
    await h?.close();
    await provider?.close();
  });

  const refusals = () =>
    h.logs.filter((l) => l.message === 'sso sign-in refused').map((l) => l.fields as Record<string, unknown>);

  it('offers "Sign in with SSO" beside the password form', async () => {
    const page = await new CookieBrowser().request(`${h.url}/login`);
    expect(page.html).toContain('href="/login/oidc"');
    expect(page.html).toContain('Sign in with SSO');
    expect(page.html).toContain('name="password"');
  });

  it('signs in: code flow with PKCE, state and nonce; provisions the operator with the mapped roles; the session works', async () => {
    const browser = new CookieBrowser();
    const start = await browser.request(`${h.url}/login/oidc?next=/history`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.location!);
    expect(authorize.origin).toBe(provider.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    for (const p of ['code_challenge', 'state', 'nonce'])
      expect(authorize.searchParams.get(p)).toMatch(/^.{22,}$/);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${h.url}/login/oidc/callback`);
    expect(browser.jar(h.url).has(TRANSACTION)).toBe(true);
    browser.jars.get(new URL(h.url).origin)!.delete(TRANSACTION);
    // Start again through the helper (a fresh transaction), and come back.
    const callback = await authorizeAt(browser, h.url, provider, 'ada');
    const landed = await browser.request(callback);
    expect(landed.status).toBe(200);
    expect(landed.html).toContain('<meta http-equiv="refresh" content="0;url=/"');
    expect(browser.jar(h.url).has(TRANSACTION)).toBe(false);
    expect(browser.jar(h.url).get(SESSION)).toMatch(/^cs_sess_/);
    const inbox = await browser.request(`${h.url}/`);
    expect(inbox.status).toBe(200);
    expect(inbox.html).toContain('ada.sso@acme.test');
    expect(hidden(inbox.html, 'csrf')).toMatch(/.{20,}/);
    // Provisioned with the roles the console knows (auditor is not one of them).
    const ada = (await h.directory.operators('acme')).find((o) => o.email === 'ada.sso@acme.test');
    expect(ada).toEqual({ email: 'ada.sso@acme.test', tenant: 'acme', roles: ['approver'] });
    const line = h.logs.find((l) => l.message === 'sso sign-in');
    expect(line?.fields).toMatchObject({ operator: 'user:ada.sso@acme.test', provisioned: true });
    // No token, code or secret in any log line.
    const logged = JSON.stringify(h.logs);
    expect(logged).not.toContain(new URL(callback).searchParams.get('code')!);
    expect(logged).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
    expect(logged).not.toContain(provider.clientSecret);
  });

  it('sets the roles from the provider at every sign-in, and rotates the session id', async () => {
    provider.accounts.set('ada', { email: 'ada.sso@acme.test', tenant: 'acme', roles: ['viewer'] });
    const browser = new CookieBrowser();
    await browser.request(await authorizeAt(browser, h.url, provider, 'ada'));
    const first = browser.jar(h.url).get(SESSION);
    await browser.request(await authorizeAt(browser, h.url, provider, 'ada'));
    const second = browser.jar(h.url).get(SESSION);
    expect(second).toMatch(/^cs_sess_/);
    expect(second).not.toBe(first);
    expect(await h.directory.resolveSession(first!)).toBeUndefined();
    const ada = (await h.directory.operators('acme')).find((o) => o.email === 'ada.sso@acme.test');
    expect(ada?.roles).toEqual(['viewer']);
    provider.accounts.set('ada', { email: 'ada.sso@acme.test', tenant: 'acme', roles: ['approver'] });
  });

  it('refuses a tenant the directory does not know: forbidden, no operator, no session', async () => {
    const browser = new CookieBrowser();
    const landed = await browser.request(await authorizeAt(browser, h.url, provider, 'mallory'));
    expect(landed.status).toBe(403);
    expect(reasonOf(landed.html)).toBe('forbidden');
    expect(landed.html).toContain('names a tenant this console does not know');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    expect(await h.directory.tenants()).toEqual(['acme', 'globex']);
    expect(refusals().at(-1)).toMatchObject({
      reason: 'forbidden',
      tenant: 'initech',
      detail: 'unknown_tenant',
    });
  });

  it('refuses an account without a tenant claim: forbidden', async () => {
    const browser = new CookieBrowser();
    const landed = await browser.request(await authorizeAt(browser, h.url, provider, 'tom'));
    expect(landed.status).toBe(403);
    expect(reasonOf(landed.html)).toBe('forbidden');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
  });

  it('refuses an account without a deciding or viewing role: forbidden, not provisioned', async () => {
    const browser = new CookieBrowser();
    const landed = await browser.request(await authorizeAt(browser, h.url, provider, 'nora'));
    expect(landed.status).toBe(403);
    expect(reasonOf(landed.html)).toBe('forbidden');
    expect(landed.html).toContain('no role in this console');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    expect((await h.directory.operators('acme')).map((o) => o.email)).not.toContain('nora@acme.test');
    expect(refusals().at(-1)).toMatchObject({ reason: 'forbidden', subject: 'nora' });
  });

  it('never lets a provider account take over a password operator with the same email', async () => {
    const browser = new CookieBrowser();
    const landed = await browser.request(await authorizeAt(browser, h.url, provider, 'squatter'));
    expect(landed.status).toBe(403);
    expect(reasonOf(landed.html)).toBe('forbidden');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    const approver = (await h.directory.operators('acme')).find((o) => o.email === 'approver@acme.test');
    expect(approver?.roles).toEqual(['approver']);
    expect(refusals().at(-1)).toMatchObject({ detail: 'email_taken' });
  });

  // Issue 24, hole 6: these provisioned a second approver that reads like approver@acme.test.
  it.each([
    [
      'a zero-width space inside',
      'appro\u200Bver@acme.test',
      'acme',
      'email_invisible',
      'invisible or format characters',
    ],
    [
      'a Cyrillic а for the Latin a',
      '\u0430pprover@acme.test',
      'acme',
      'email_confusable',
      'looks like another operator',
    ],
    [
      'fullwidth letters',
      '\uFF41\uFF50\uFF50rover@acme.test',
      'acme',
      'email_confusable',
      'looks like another operator',
    ],
    [
      'Greek ο and Cyrillic е, for another tenant',
      'appr\u03BFv\u0435r@acme.test',
      'globex',
      'email_confusable',
      'looks like another operator',
    ],
  ])(
    'refuses an email that reads like a password operator’s (%s): forbidden, named, not provisioned',
    async (_what, email, tenant, detail, says) => {
      const subject = `lookalike-${[...email].map((c) => c.codePointAt(0)!.toString(16)).join('')}`;
      provider.accounts.set(subject, { email, tenant, roles: ['approver'] });
      const browser = new CookieBrowser();
      const landed = await browser.request(await authorizeAt(browser, h.url, provider, subject));
      expect(landed.status).toBe(403);
      expect(reasonOf(landed.html)).toBe('forbidden');
      expect(landed.html).toContain(says);
      expect(browser.jar(h.url).has(SESSION)).toBe(false);
      expect(refusals().at(-1)).toMatchObject({ reason: 'forbidden', subject, detail });
      expect((await h.directory.operators(tenant)).map((o) => o.email)).not.toContain(email.toLowerCase());
      expect(await h.directory.isProviderOperator(email, provider.issuer)).toBe(false);
    },
  );

  it('still provisions a genuinely different email', async () => {
    provider.accounts.set('approver2', { email: 'approver2@acme.test', tenant: 'acme', roles: ['approver'] });
    const browser = new CookieBrowser();
    const landed = await browser.request(await authorizeAt(browser, h.url, provider, 'approver2'));
    expect(landed.status).toBe(200);
    expect(browser.jar(h.url).get(SESSION)).toMatch(/^cs_sess_/);
    expect((await h.directory.operators('acme')).map((o) => o.email)).toContain('approver2@acme.test');
  });

  it('refuses a tampered state, and the transaction is spent: invalid_state', async () => {
    const browser = new CookieBrowser();
    const callback = new URL(await authorizeAt(browser, h.url, provider, 'ada'));
    const tampered = new URL(callback);
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    const refused = await browser.request(tampered.href);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused.html)).toBe('invalid_state');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    // The genuine callback after that finds no transaction: used once, whatever the outcome.
    const again = await browser.request(callback.href);
    expect(again.status).toBe(403);
    expect(reasonOf(again.html)).toBe('invalid_state');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
  });

  it('refuses a callback in a browser that did not start the sign-in: invalid_state', async () => {
    const callback = await authorizeAt(new CookieBrowser(), h.url, provider, 'ada');
    const other = new CookieBrowser();
    const refused = await other.request(callback);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused.html)).toBe('invalid_state');
    expect(other.jar(h.url).has(SESSION)).toBe(false);
    expect(refusals().at(-1)).toMatchObject({ reason: 'invalid_state', transaction: 'missing' });
  });

  // The transaction cookie is sealed with an HMAC under a key derived from the client secret,
  // for its own name: whatever the browser changes, the callback answers as if it had none.
  const EXPIRED_OR_ELSEWHERE = 'This sign-in expired or was started in another browser. Sign in again.';

  it('refuses a transaction cookie changed in the browser (another landing path): invalid_state, logged tampered', async () => {
    const browser = new CookieBrowser();
    const callback = await authorizeAt(browser, h.url, provider, 'ada');
    const [payload, mac] = browser.jar(h.url).get(TRANSACTION)!.split('.');
    const transaction = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8'));
    expect(transaction.next).toBe('/');
    const forged = Buffer.from(JSON.stringify({ ...transaction, next: '/grants' })).toString('base64url');
    browser.jar(h.url).set(TRANSACTION, `${forged}.${mac}`);
    const refused = await browser.request(callback);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused.html)).toBe('invalid_state');
    expect(refused.html).toContain(EXPIRED_OR_ELSEWHERE);
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    expect(browser.jar(h.url).has(TRANSACTION)).toBe(false);
    expect(refusals().at(-1)).toMatchObject({ reason: 'invalid_state', transaction: 'tampered' });
  });

  it('refuses a transaction sealed under the server’s key for another cookie: invalid_state, logged tampered', async () => {
    const browser = new CookieBrowser();
    const callback = await authorizeAt(browser, h.url, provider, 'ada');
    const [payload] = browser.jar(h.url).get(TRANSACTION)!.split('.');
    const key = oidcCookieKey(provider.clientSecret);
    browser.jar(h.url).set(TRANSACTION, sealValue(key, 'countersign_flash', payload!));
    const refused = await browser.request(callback);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused.html)).toBe('invalid_state');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    expect(refusals().at(-1)).toMatchObject({ reason: 'invalid_state', transaction: 'tampered' });
    // The same payload sealed for the transaction cookie opens: the refusal was the name alone.
    const again = new CookieBrowser();
    const second = await authorizeAt(again, h.url, provider, 'ada');
    const [ownPayload] = again.jar(h.url).get(TRANSACTION)!.split('.');
    again.jar(h.url).set(TRANSACTION, sealValue(key, 'countersign_oidc', ownPayload!));
    expect((await again.request(second)).status).toBe(200);
    expect(again.jar(h.url).get(SESSION)).toMatch(/^cs_sess_/);
  });

  it('refuses an over-long transaction cookie without an error: invalid_state, logged malformed', async () => {
    const browser = new CookieBrowser();
    const callback = await authorizeAt(browser, h.url, provider, 'ada');
    browser.jar(h.url).set(TRANSACTION, `${'A'.repeat(3000)}.${'B'.repeat(43)}`);
    const refused = await browser.request(callback);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused.html)).toBe('invalid_state');
    expect(refused.html).toContain(EXPIRED_OR_ELSEWHERE);
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    expect(refusals().at(-1)).toMatchObject({ reason: 'invalid_state', transaction: 'malformed' });
    expect(h.logs.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('refuses a replayed code, even with the transaction cookie copied back: sso_failed (invalid_grant)', async () => {
    const browser = new CookieBrowser();
    const callback = await authorizeAt(browser, h.url, provider, 'ada');
    const transaction = browser.jar(h.url).get(TRANSACTION)!;
    expect((await browser.request(callback)).status).toBe(200);
    const attacker = new CookieBrowser();
    attacker.jar(h.url).set(TRANSACTION, transaction);
    const replayed = await attacker.request(callback);
    expect(replayed.status).toBe(401);
    expect(reasonOf(replayed.html)).toBe('sso_failed');
    expect(attacker.jar(h.url).has(SESSION)).toBe(false);
    expect(String(refusals().at(-1)?.['detail'])).toContain('invalid_grant');
  });

  it('refuses a callback whose issuer was swapped (mix-up): sso_failed', async () => {
    const browser = new CookieBrowser();
    const callback = new URL(await authorizeAt(browser, h.url, provider, 'ada'));
    expect(callback.searchParams.get('iss')).toBe(provider.issuer);
    callback.searchParams.set('iss', 'https://idp.attacker.example');
    const refused = await browser.request(callback.href);
    expect(refused.status).toBe(401);
    expect(reasonOf(refused.html)).toBe('sso_failed');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
  });

  it('shows the provider’s refusal (access_denied) as sso_failed', async () => {
    const browser = new CookieBrowser();
    const callback = new URL(await authorizeAt(browser, h.url, provider, 'nobody'));
    expect(callback.searchParams.get('error')).toBe('access_denied');
    const refused = await browser.request(callback.href);
    expect(refused.status).toBe(401);
    expect(reasonOf(refused.html)).toBe('sso_failed');
    expect(String(refusals().at(-1)?.['detail'])).toContain('access_denied');
  });

  it('refuses a sign-in that took longer than ten minutes: invalid_state', async () => {
    const browser = new CookieBrowser();
    const callback = await authorizeAt(browser, h.url, provider, 'ada');
    h.clock.advance(10 * 60_000 + 1);
    const refused = await browser.request(callback);
    expect(refused.status).toBe(403);
    expect(reasonOf(refused.html)).toBe('invalid_state');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    expect(refusals().at(-1)).toMatchObject({ reason: 'invalid_state', transaction: 'expired' });
  });

  it('logout ends the session and sends the browser to the provider’s end_session_endpoint', async () => {
    const browser = new CookieBrowser();
    await browser.request(await authorizeAt(browser, h.url, provider, 'ada'));
    const session = browser.jar(h.url).get(SESSION)!;
    const csrf = hidden((await browser.request(`${h.url}/`)).html, 'csrf');
    const out = await browser.request(`${h.url}/logout`, {
      method: 'POST',
      form: { csrf },
      headers: { origin: h.url, 'sec-fetch-site': 'same-origin' },
    });
    // A page that moves on to the provider (the CSP's form-action 'self' forbids a redirect).
    expect(out.status).toBe(200);
    const href = /id="continue" href="([^"]+)"/.exec(out.html)![1]!.replaceAll('&amp;', '&');
    expect(out.html).toContain('<meta http-equiv="refresh" content="0;url=');
    const end = new URL(href);
    expect(`${end.origin}${end.pathname}`).toBe(`${provider.issuer}/session/end`);
    expect(end.searchParams.get('client_id')).toBe(provider.clientId);
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe(`${h.url}/login`);
    // The sign-in's own ID token names whose session ends, so the provider need not ask whom.
    const hint = end.searchParams.get('id_token_hint')!;
    const claims = JSON.parse(Buffer.from(hint.split('.')[1]!, 'base64url').toString('utf8'));
    expect(claims).toMatchObject({ iss: provider.issuer, sub: 'ada', aud: provider.clientId });
    expect(await h.directory.resolveSession(session)).toBeUndefined();
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
    // The provider accepts it: its logout confirmation page, not an error.
    const confirm = await browser.request(href);
    expect(confirm.status).toBe(200);
    expect(confirm.html).toContain('logout');
  });

  it('keeps the ID token only encrypted with its session: not in the store in the clear, not in a log', async () => {
    const browser = new CookieBrowser();
    await browser.request(await authorizeAt(browser, h.url, provider, 'ada'));
    const stored = await h.store.transaction((tx) =>
      tx.local.all('SELECT issuer, id_token FROM countersign_sessions WHERE issuer IS NOT NULL'),
    );
    expect(stored.length).toBeGreaterThan(0);
    for (const row of stored) {
      expect(row['issuer']).toBe(provider.issuer);
      const text = String(row['id_token']);
      // No '.', so no JWT (header.payload.signature). Not "no eyJ anywhere": a ciphertext this long
      // holds any three given letters by chance about once in 250 rows.
      expect(text).toMatch(/^[A-Za-z0-9_-]{100,}$/);
      expect(text.startsWith('eyJ')).toBe(false);
      // Nor a JWT's JSON encoded once more: decoded, the bytes hold no claim name.
      expect(Buffer.from(text, 'base64url').toString('latin1')).not.toMatch(/"(alg|iss|sub|aud)"/);
    }
    expect(JSON.stringify(h.logs)).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });

  it('a provider that removed every role: the next sign-in attempt strips the directory and ends the open session, whose approve is then refused', async () => {
    provider.accounts.set('rhea', { email: 'rhea@acme.test', tenant: 'acme', roles: ['approver'] });
    const open = new CookieBrowser();
    await open.request(await authorizeAt(open, h.url, provider, 'rhea'));
    const token = await h.directory.issueOperatorToken({ email: 'rhea@acme.test' });
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme', 31_500) },
    });
    const review = await open.request(`${h.url}/proposals/${p.id}`);
    expect(review.status).toBe(200);
    const digest = hidden(review.html, 'digest');
    const csrf = hidden(review.html, 'csrf');

    provider.accounts.set('rhea', { email: 'rhea@acme.test', tenant: 'acme', roles: [] });
    const again = new CookieBrowser();
    const refused = await again.request(await authorizeAt(again, h.url, provider, 'rhea'));
    expect([refused.status, reasonOf(refused.html)]).toEqual([403, 'forbidden']);
    expect(again.jar(h.url).has(SESSION)).toBe(false);
    // The directory learned it before the refusal: no role, the sessions gone, audited.
    const rhea = (await h.directory.operatorAccounts('acme')).find((o) => o.email === 'rhea@acme.test')!;
    expect(rhea).toMatchObject({ roles: [], active: true, sso: true });
    const { events } = await h.engine.audit.since('acme', { afterSeq: 0, limit: 1000 });
    expect(events.filter((e) => e.proposalId === rhea.id).map((e) => [e.step, e.actor, e.detail])).toEqual([
      [
        'operator_changed',
        'system:sso',
        { operator: 'rhea@acme.test', roles: { from: ['approver'], to: [] }, issuer: provider.issuer },
      ],
    ]);
    expect(h.logs.find((l) => l.message === 'sso roles removed')?.fields).toMatchObject({
      operator: 'user:rhea@acme.test',
      sessionsEnded: 1,
    });

    // The session opened before the removal no longer approves: sent to sign in, nothing paid.
    const approve = await open.request(`${h.url}/proposals/${p.id}/approve`, {
      method: 'POST',
      form: { digest, csrf },
      headers: { origin: h.url, 'sec-fetch-site': 'same-origin' },
    });
    expect([approve.status, approve.location]).toEqual([
      303,
      `${h.url}/login?next=${encodeURIComponent(`/proposals/${p.id}`)}`,
    ]);
    const byToken = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token,
      body: { seenDigest: p.digest },
    });
    expect([byToken.status, byToken.body['reason']]).toEqual([401, 'unauthenticated']);
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');

    // Roles given back at the provider: the next sign-in sets them again.
    provider.accounts.set('rhea', { email: 'rhea@acme.test', tenant: 'acme', roles: ['approver'] });
    const back = new CookieBrowser();
    expect((await back.request(await authorizeAt(back, h.url, provider, 'rhea'))).status).toBe(200);
    expect(
      (await h.directory.operatorAccounts('acme')).find((o) => o.email === 'rhea@acme.test')?.roles,
    ).toEqual(['approver']);
  });

  it('a provider that demotes an approver at a sign-in withdraws their "1 of 2": it no longer counts toward the payment', async () => {
    provider.accounts.set('sol', { email: 'sol@acme.test', tenant: 'acme', roles: ['approver'] });
    const browser = new CookieBrowser();
    await browser.request(await authorizeAt(browser, h.url, provider, 'sol'));
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme', 1_250_000) },
    });
    const review = await browser.request(`${h.url}/proposals/${p.id}`);
    const approved = await browser.request(`${h.url}/proposals/${p.id}/approve`, {
      method: 'POST',
      form: { digest: hidden(review.html, 'digest'), csrf: hidden(review.html, 'csrf') },
      headers: { origin: h.url, 'sec-fetch-site': 'same-origin' },
    });
    expect(approved.status).toBe(303);
    expect((await h.engine.proposals.get('acme', p.id))?.approvals.given.map((g) => g.by)).toEqual([
      'user:sol@acme.test',
    ]);

    provider.accounts.set('sol', { email: 'sol@acme.test', tenant: 'acme', roles: ['viewer'] });
    const again = new CookieBrowser();
    expect((await again.request(await authorizeAt(again, h.url, provider, 'sol'))).status).toBe(200);
    expect((await h.engine.proposals.get('acme', p.id))?.approvals.given).toEqual([]);
    const withdrawn = (await h.engine.audit.events('acme', p.id)).filter(
      (e) => e.step === 'approval_withdrawn',
    );
    expect(withdrawn.map((e) => [e.actor, e.reason, e.detail['approver']])).toEqual([
      ['system:sso', 'forbidden', 'user:sol@acme.test'],
    ]);
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
  });

  it('a single-sign-on session ends an hour after its sign-in: the console sends the operator through the provider, which checks the roles again', async () => {
    provider.accounts.set('sol', { email: 'sol@acme.test', tenant: 'acme', roles: ['approver'] });
    const browser = new CookieBrowser();
    await browser.request(await authorizeAt(browser, h.url, provider, 'sol'));
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme') },
    });
    const review = await browser.request(`${h.url}/proposals/${p.id}`);
    const form = { digest: hidden(review.html, 'digest'), csrf: hidden(review.html, 'csrf') };
    for (let i = 0; i < 2; i++) {
      h.clock.advance(20 * 60_000);
      expect((await browser.request(`${h.url}/`)).status).toBe(200);
    }
    provider.accounts.set('sol', { email: 'sol@acme.test', tenant: 'acme', roles: [] });
    h.clock.advance(20 * 60_000);
    // Used 20 minutes ago, so not idle; but the provider's word is an hour old.
    const approve = await browser.request(`${h.url}/proposals/${p.id}/approve`, {
      method: 'POST',
      form,
      headers: { origin: h.url, 'sec-fetch-site': 'same-origin' },
    });
    expect([approve.status, approve.location]).toEqual([
      303,
      `${h.url}/login/oidc?next=${encodeURIComponent(`/proposals/${p.id}`)}`,
    ]);
    expect(browser.jar(h.url).has(SESSION)).toBe(true);
    // The provider still knows the browser: straight back, and the roles it now gives are none.
    const callback = await browser.follow(approve.location!, (u) => u.pathname === '/login/oidc/callback');
    expect(callback.status).toBe(0);
    const refused = await browser.request(callback.url);
    expect([refused.status, reasonOf(refused.html)]).toEqual([403, 'forbidden']);
    expect(
      (await h.directory.operatorAccounts('acme')).find((o) => o.email === 'sol@acme.test')?.roles,
    ).toEqual([]);
    // Nobody approved it (it has since expired on its own).
    const steps = (await h.engine.audit.events('acme', p.id)).map((e) => e.step);
    expect(steps).toContain('proposed');
    expect(steps).not.toContain('approved');
    // A password operator's session knows no such bound.
    const op = h.tenants.acme.operators.viewer;
    const password = new CookieBrowser();
    const login = await password.request(`${h.url}/login`);
    await password.request(`${h.url}/login`, {
      method: 'POST',
      form: { csrf: hidden(login.html, 'csrf'), email: op.email, password: op.password },
      headers: { origin: h.url, 'sec-fetch-site': 'same-origin' },
    });
    for (let i = 0; i < 3; i++) {
      h.clock.advance(25 * 60_000);
      expect((await password.request(`${h.url}/`)).status).toBe(200);
    }
  });

  it('a password operator’s logout stays on the console', async () => {
    const browser = new CookieBrowser();
    const op = h.tenants.acme.operators.viewer;
    const form = await browser.request(`${h.url}/login`);
    const headers = { origin: h.url, 'sec-fetch-site': 'same-origin' };
    await browser.request(`${h.url}/login`, {
      method: 'POST',
      form: { csrf: hidden(form.html, 'csrf'), email: op.email, password: op.password },
      headers,
    });
    const csrf = hidden((await browser.request(`${h.url}/`)).html, 'csrf');
    const out = await browser.request(`${h.url}/logout`, { method: 'POST', form: { csrf }, headers });
    expect(out.location).toBe(`${h.url}/login`);
  });
});

describe('password sign-in turned off', () => {
  let provider: TestProvider;
  let h: ServerHarness;

  beforeAll(async () => {
    provider = await startTestProvider();
    h = await serverHarness({
      passwordSignIn: false,
      oidc: provider.config({
        // A mapping function instead of claim names.
        tenant: (claims) => (String(claims['email']).endsWith('@globex.test') ? 'globex' : undefined),
        roles: (claims) => (claims['email'] === 'vic@globex.test' ? ['viewer'] : []),
      }),
    });
    await provider.register(h.url);
    provider.accounts.set('vic', { email: 'vic@globex.test' });
  });

  afterAll(async () => {
    await h?.close();
    await provider?.close();
  });

  it('shows only "Sign in with SSO" and refuses POST /login with the right password', async () => {
    const browser = new CookieBrowser();
    const page = await browser.request(`${h.url}/login`);
    expect(page.html).toContain('Sign in with SSO');
    expect(page.html).not.toContain('name="password"');
    const op = h.tenants.acme.operators.approver;
    const posted = await browser.request(`${h.url}/login`, {
      method: 'POST',
      form: {
        csrf: browser.jar(h.url).get('__Host-countersign_login')!,
        email: op.email,
        password: op.password,
      },
      headers: { origin: h.url, 'sec-fetch-site': 'same-origin' },
    });
    expect(posted.status).toBe(403);
    expect(posted.html).toContain('forbidden');
    expect(browser.jar(h.url).has(SESSION)).toBe(false);
  });

  it('maps tenant and roles with functions of the claims', async () => {
    const browser = new CookieBrowser();
    const landed = await browser.request(await authorizeAt(browser, h.url, provider, 'vic'));
    expect(landed.status).toBe(200);
    expect(await h.directory.operators('globex')).toContainEqual({
      email: 'vic@globex.test',
      tenant: 'globex',
      roles: ['viewer'],
    });
  });
});

describe('OIDC configuration', () => {
  it('accepts https issuers, and http only on loopback', () => {
    for (const issuer of [
      'https://acme.okta.com/oauth2/default',
      'https://login.microsoftonline.com/0000/v2.0',
      'https://accounts.google.com',
      'http://127.0.0.1:9000',
      'http://localhost:9000/realms/dev',
      'http://[::1]:9000',
    ])
      expect(checkOidcConfig({ issuer, clientId: 'c' }).issuer).toBe(issuer);
    for (const issuer of [
      'http://idp.example.com',
      'http://10.0.0.5:8080',
      'http://localhost.example.com',
      'ftp://x',
    ])
      expect(() => checkOidcConfig({ issuer, clientId: 'c' })).toThrow(ConfigurationError);
    expect(() => checkOidcConfig({ issuer: 'https://idp.example.com', clientId: '' })).toThrow(
      ConfigurationError,
    );
  });

  it('refuses a post-logout redirect that is not https (http only on loopback), and a provider session age that is not a positive whole number', async () => {
    const base = { issuer: 'https://idp.example.com', clientId: 'c' };
    expect(
      checkOidcConfig({ ...base, postLogoutRedirectUri: 'https://approvals.example.com/bye' })
        .postLogoutRedirectUri,
    ).toBe('https://approvals.example.com/bye');
    for (const postLogoutRedirectUri of [
      'http://approvals.example.com/bye',
      'not a url',
      'javascript:alert(1)',
    ])
      expect(() => checkOidcConfig({ ...base, postLogoutRedirectUri })).toThrow(ConfigurationError);
    const h = await serverHarness();
    try {
      for (const providerSessionMaxMs of [0, -1, 1.5, Number.NaN])
        expect(() => new PrincipalDirectory(h.store, { providerSessionMaxMs })).toThrow(ConfigurationError);
    } finally {
      await h.close();
    }
  });

  it('refuses to build an app with a plain-http issuer off loopback', async () => {
    const h = await serverHarness();
    try {
      expect(() =>
        createCountersignApp({
          engine: h.engine,
          directory: h.directory,
          oidc: { issuer: 'http://idp.example.com', clientId: 'countersign' },
        }),
      ).toThrow(/must be https/);
      expect(() =>
        createCountersignApp({ engine: h.engine, directory: h.directory, passwordSignIn: false }),
      ).toThrow(ConfigurationError);
    } finally {
      await h.close();
    }
  });
});
