import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';
import { ConsoleClient, hidden } from './support/console-client.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({
    directory: { loginLimit: { perAccount: 5, perClient: 1000, windowMs: 15 * 60_000 } },
  });
});
afterAll(async () => {
  await h.close();
});

const approver = () => h.tenants.acme.operators.approver;

async function signedIn(
  role: 'approver' | 'viewer' | 'admin' = 'approver',
  tenant: 'acme' | 'globex' = 'acme',
) {
  const client = new ConsoleClient(h.url);
  const op = h.tenants[tenant].operators[role];
  const r = await client.login(op.email, op.password);
  expect(r.status).toBe(303);
  return client;
}

async function pendingPayment() {
  const invoice = freshInvoice(h.world, 'acme');
  return proposeViaApi(h, 'acme', {
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    resource: `invoice:${invoice}`,
  });
}

describe('response headers', () => {
  it('sends a CSP with a fresh nonce per response, no unsafe-inline, frame-ancestors none, nosniff and no-referrer', async () => {
    const client = new ConsoleClient(h.url);
    const a = await client.get('/login');
    const b = await client.get('/login');
    const csp = a.response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const nonceA = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    const nonceB = /script-src 'nonce-([^']+)'/.exec(
      b.response.headers.get('content-security-policy') ?? '',
    )?.[1];
    expect(nonceA).toBeTruthy();
    expect(nonceA).not.toBe(nonceB);
    expect(a.html).toContain(`<script nonce="${nonceA}">`);
    expect(a.html.match(/<script/g)).toHaveLength(1);
    expect(a.response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(a.response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(a.response.headers.get('x-frame-options')).toBe('DENY');
    expect(a.response.headers.get('cache-control')).toBe('no-store');
  });

  it('serves the one stylesheet under its content hash, cached forever', async () => {
    const client = new ConsoleClient(h.url);
    const page = await client.get('/login');
    const href = /<link rel="stylesheet" href="([^"]+)"/.exec(page.html)?.[1];
    expect(href).toMatch(/^\/assets\/console\.[0-9a-f]{12}\.css$/);
    const css = await client.get(href!);
    expect(css.status).toBe(200);
    expect(css.response.headers.get('content-type')).toContain('text/css');
    expect(css.response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const file = readFileSync(new URL('../../src/server/console/console.css', import.meta.url), 'utf8');
    expect(css.html).toBe(file);
    expect(href).toBe(`/assets/console.${createHash('sha256').update(file).digest('hex').slice(0, 12)}.css`);
    const stale = await client.get('/assets/console.000000000000.css');
    expect(stale.status).toBe(404);
    expect(stale.response.headers.get('cache-control')).not.toContain('immutable');
  });
});

describe('sessions', () => {
  it('sets a __Host- session cookie: HttpOnly, Secure (127.0.0.1 is a secure context), SameSite=Strict, Path=/, no Domain', async () => {
    const client = new ConsoleClient(h.url);
    const form = await client.get('/login');
    const r = await client.post('/login', {
      csrf: hidden(form.html, 'csrf'),
      email: approver().email,
      password: approver().password,
    });
    expect(r.status).toBe(303);
    expect(r.location).toBe('/');
    const cookie = r.response.headers.getSetCookie().find((c) => c.startsWith('__Host-countersign_session='));
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Domain=/i);
    expect(cookie).toMatch(/Max-Age=43200/);
  });

  it('rotates the session id at every login; the old id no longer works', async () => {
    const client = new ConsoleClient(h.url);
    const csrf = hidden((await client.get('/login')).html, 'csrf');
    expect(
      (await client.post('/login', { csrf, email: approver().email, password: approver().password })).status,
    ).toBe(303);
    const first = client.cookies.get('__Host-countersign_session');
    // A second sign-in from a browser that still holds a session (a login form left open).
    const again = await client.post('/login', {
      csrf,
      email: approver().email,
      password: approver().password,
    });
    expect(again.status).toBe(303);
    const second = client.cookies.get('__Host-countersign_session');
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    const stale = new ConsoleClient(h.url);
    stale.cookies.set('__Host-countersign_session', first!);
    const r = await stale.get('/');
    expect(r.status).toBe(303);
    expect(r.response.headers.get('location')).toBe('/login?next=%2F');
  });

  it('ends a session idle for 30 minutes', async () => {
    const client = await signedIn();
    h.clock.advance(29 * 60_000);
    expect((await client.get('/')).status).toBe(200);
    h.clock.advance(30 * 60_000 + 1);
    expect((await client.get('/')).status).toBe(303);
  });

  it('ends a session 12 hours after login however busy it is', async () => {
    const client = await signedIn();
    for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
      h.clock.advance(20 * 60_000);
      expect((await client.get('/')).status, `after ${minutes} min`).toBe(200);
    }
    h.clock.advance(20 * 60_000);
    expect((await client.get('/')).status).toBe(303);
  });

  it('signs out with a CSRF-checked POST; GET /logout does nothing', async () => {
    const client = await signedIn();
    expect((await client.get('/logout')).status).toBe(404);
    expect((await client.get('/')).status).toBe(200);
    const csrf = await client.csrf();
    const out = await client.post('/logout', { csrf });
    expect(out.status).toBe(303);
    expect(out.location).toBe('/login');
    expect((await client.get('/')).status).toBe(303);
  });

  it('never stores a session id or token in clear', async () => {
    const client = await signedIn();
    const sessionId = client.cookies.get('__Host-countersign_session')!;
    const dump = await h.store.transaction(async (tx) => [
      ...(await tx.local.all('SELECT * FROM countersign_sessions')),
      ...(await tx.local.all('SELECT * FROM countersign_api_tokens')),
      ...(await tx.local.all('SELECT * FROM countersign_operators')),
    ]);
    const text = JSON.stringify(dump);
    expect(text).not.toContain(sessionId);
    expect(text).not.toContain(approver().token);
    expect(text).not.toContain(approver().password);
    // A salted scrypt hash instead (at the harness's test cost; password.test.ts holds production's).
    expect(text).toMatch(/"scrypt\$\d+\$8\$1\$[\w-]{22}\$[\w-]{43}"/);
  });
});

describe('login', () => {
  it('refuses wrong credentials with 401 and the same sentence for an unknown email', async () => {
    const client = new ConsoleClient(h.url);
    const wrong = await client.login(h.tenants.globex.operators.viewer.email, 'not the password at all');
    const unknown = await client.login('nobody@nowhere.test', 'not the password at all');
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.html).toContain('That email and password do not match an operator.');
    expect(unknown.html).toContain('That email and password do not match an operator.');
  });

  it('rate-limits failed logins per account: the 6th attempt is 429 even with the right password, until the window passes', async () => {
    const op = h.tenants.globex.operators.admin;
    const client = new ConsoleClient(h.url);
    for (let i = 0; i < 5; i++)
      expect((await client.login(op.email, `wrong password ${i}`)).status).toBe(401);
    const blocked = await client.login(op.email, op.password);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(blocked.html).toContain('Too many failed sign-ins');
    h.clock.advance(15 * 60_000 + 1);
    expect((await client.login(op.email, op.password)).status).toBe(303);
  });

  it('refuses a login post without the login form’s token, or from another site', async () => {
    const client = new ConsoleClient(h.url);
    const noCookie = await client.post('/login', {
      csrf: 'x'.repeat(43),
      email: approver().email,
      password: approver().password,
    });
    expect(noCookie.status).toBe(403);
    const form = await client.get('/login');
    const csrf = hidden(form.html, 'csrf');
    const crossSite = await client.post(
      '/login',
      { csrf, email: approver().email, password: approver().password },
      { 'sec-fetch-site': 'cross-site', origin: 'http://evil.test' },
    );
    expect(crossSite.status).toBe(403);
    expect(crossSite.html).toContain('cross_site_request');
    expect(client.cookies.has('__Host-countersign_session')).toBe(false);
  });

  it('only redirects to a local path after login', async () => {
    const client = new ConsoleClient(h.url);
    const form = await client.get('/login?next=//evil.test/x');
    expect(hidden(form.html, 'next')).toBe('/');
    const r = await client.post('/login', {
      csrf: hidden(form.html, 'csrf'),
      email: approver().email,
      password: approver().password,
      next: 'https://evil.test',
    });
    expect(r.location).toBe('/');
  });
});

describe('state-changing console requests need the CSRF token, the same origin, and a form with only the expected fields', () => {
  it('refuses an approval without the token, with another session’s token, cross-site, or from another origin, and executes nothing', async () => {
    const proposal = await pendingPayment();
    const client = await signedIn();
    const other = await signedIn('admin');
    const otherCsrf = await other.csrf();
    const csrf = await client.csrf();
    const path = `/proposals/${proposal.id}/approve`;
    const attempts: [string, Record<string, string>, Record<string, string>][] = [
      ['no token', { digest: proposal.digest }, {}],
      ['another session’s token', { digest: proposal.digest, csrf: otherCsrf }, {}],
      ['Sec-Fetch-Site cross-site', { digest: proposal.digest, csrf }, { 'sec-fetch-site': 'cross-site' }],
      ['Sec-Fetch-Site same-site', { digest: proposal.digest, csrf }, { 'sec-fetch-site': 'same-site' }],
      [
        'another Origin',
        { digest: proposal.digest, csrf },
        { origin: 'http://evil.test', 'sec-fetch-site': '' },
      ],
    ];
    for (const [name, fields, headers] of attempts) {
      const cleaned = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
      const r = await client.post(path, fields, cleaned);
      expect(r.status, name).toBe(403);
      expect(r.html, name).toContain('cross_site_request');
    }
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
    const ok = await client.post(path, { digest: proposal.digest, csrf });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe(`/proposals/${proposal.id}`);
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('succeeded');
  });

  it('refuses an approve form carrying anything but the digest and the token (400 invalid_form)', async () => {
    const proposal = await pendingPayment();
    const client = await signedIn();
    const csrf = await client.csrf();
    const extra = await client.post(`/proposals/${proposal.id}/approve`, {
      digest: proposal.digest,
      csrf,
      amount_minor: '1',
    });
    expect(extra.status).toBe(400);
    expect(extra.html).toContain('invalid_form');
    const twice = await client.post(`/proposals/${proposal.id}/approve`, [
      ['digest', proposal.digest],
      ['digest', 'f'.repeat(64)],
      ['csrf', csrf],
    ]);
    expect(twice.status).toBe(400);
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('GET never changes state: action paths answer 404 to GET', async () => {
    const proposal = await pendingPayment();
    const client = await signedIn();
    for (const action of ['approve', 'decline', 'edit', 'reconcile']) {
      expect((await client.get(`/proposals/${proposal.id}/${action}?digest=${proposal.digest}`)).status).toBe(
        404,
      );
    }
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
  });

  it('the API with a console session (no bearer) needs the X-CSRF-Token header and the same origin', async () => {
    const proposal = await pendingPayment();
    const client = await signedIn();
    const csrf = await client.csrf();
    const headers = { cookie: client.cookieHeader };
    const without = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      headers,
      body: { seenDigest: proposal.digest },
    });
    expect(without.status).toBe(403);
    expect(without.body['reason']).toBe('cross_site_request');
    const crossSite = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      headers: { ...headers, 'x-csrf-token': csrf, 'sec-fetch-site': 'cross-site' },
      body: { seenDigest: proposal.digest },
    });
    expect(crossSite.status).toBe(403);
    const ok = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      headers: { ...headers, 'x-csrf-token': csrf },
      body: { seenDigest: proposal.digest },
    });
    expect(ok.status).toBe(200);
    expect(ok.body['outcome']).toMatchObject({ kind: 'succeeded' });
  });

  it('a signed-out form post changes nothing and leads to the login page', async () => {
    const proposal = await pendingPayment();
    const client = new ConsoleClient(h.url);
    const r = await client.post(`/proposals/${proposal.id}/approve`, { digest: proposal.digest, csrf: 'x' });
    expect(r.status).toBe(303);
    expect(r.location).toBe(`/login?next=${encodeURIComponent(`/proposals/${proposal.id}`)}`);
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
  });
});

describe('cookies off loopback', () => {
  it('uses countersign_session without Secure for plain http on another host, and __Host- with Secure for https', async () => {
    for (const [publicUrl, name, secure] of [
      ['http://approvals.internal:8080', 'countersign_session', false],
      ['https://approvals.example.com', '__Host-countersign_session', true],
    ] as const) {
      const other = await serverHarness({ publicUrl });
      try {
        const client = new ConsoleClient(other.url, new URL(publicUrl).origin);
        const op = other.tenants.acme.operators.approver;
        const r = await client.login(op.email, op.password);
        expect(r.status, publicUrl).toBe(303);
        const cookie = r.response.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
        expect(cookie, publicUrl).toBeDefined();
        expect(/; Secure/.test(cookie!), publicUrl).toBe(secure);
        expect((await client.get('/')).status, publicUrl).toBe(200);
        // The Origin check follows the public URL, not the address the request came in on.
        const wrongOrigin = await new ConsoleClient(other.url, other.url).login(op.email, op.password);
        expect(wrongOrigin.status, publicUrl).toBe(403);
      } finally {
        await other.close();
      }
    }
  });
});
