import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKENDS } from '../support/backends.js';
import { testPostgres } from '../support/postgres.js';
import { ConsoleClient } from './support/console-client.js';
import { HOSTILE, hostileOperation } from './support/hostile-operation.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

// An outside security team's pass over the HTTP server: each attempt is one thing an agent token,
// a viewer, another tenant or a careless click could try, and each must be refused with its exact
// status and reason code, change nothing, and never answer 500. Runs over SQLite and, where the
// backend matters (text PostgreSQL cannot hold), over PostgreSQL too.

let h: ServerHarness;
const postgres = testPostgres();
let pgH: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ extraOperations: [hostileOperation] });
  pgH = await serverHarness({ store: await postgres.store(), extraOperations: [hostileOperation] });
}, 120_000);
afterAll(async () => {
  await h?.close();
  await pgH?.close();
  await postgres.cleanup();
});

type Tenant = 'acme' | 'globex';
type OperatorRole = 'approver' | 'viewer' | 'admin';

async function signedIn(role: OperatorRole, tenant: Tenant = 'acme', on: ServerHarness = h) {
  const client = new ConsoleClient(on.url);
  const op = on.tenants[tenant].operators[role];
  expect((await client.login(op.email, op.password)).status).toBe(303);
  return client;
}

async function payment(on: ServerHarness = h, tenant: Tenant = 'acme') {
  return proposeViaApi(on, tenant, {
    operation: 'invoice.pay',
    request: { invoice_id: freshInvoice(on.world, tenant) },
  });
}

async function draft(on: ServerHarness = h) {
  return proposeViaApi(on, 'acme', {
    operation: 'email_broadcast.apply_draft',
    request: { broadcast_id: 'bc-spring', subject: 'Hello', body: 'Opening day.' },
    resource: 'broadcast:bc-spring',
  });
}

/** Every reason code a console page shows (notices, refusals, the error page). */
function reasons(html: string): string[] {
  return [...html.matchAll(/<code class="reason-code">([a-z_]+)<\/code>/g)].map((m) => m[1]!);
}

async function statusOf(id: string, on: ServerHarness = h, tenant: Tenant = 'acme') {
  return (await on.engine.proposals.get(tenant, id))?.status;
}

/** A request sent byte for byte as written: fetch would resolve `..` before it leaves. */
function raw(
  on: { url: string },
  path: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const url = new URL(on.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => {
          let body: Record<string, unknown>;
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            body = { text };
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    // The server may answer and close before a huge body is written.
    const ignoreClosed = (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE' && error.code !== 'ECONNRESET') reject(error);
    };
    req.on('error', ignoreClosed);
    req.on('socket', (socket) => socket.on('error', ignoreClosed));
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

describe('an agent token never decides', () => {
  it('approving, declining or editing its own proposal is 403 forbidden and changes nothing', async () => {
    const token = h.tenants.acme.agentToken;
    const p = await payment();
    const d = await draft();
    for (const [path, body, id] of [
      [`/api/v1/proposals/${p.id}/approve`, { seenDigest: p.digest }, p.id],
      [`/api/v1/proposals/${p.id}/decline`, { reason: 'never mind' }, p.id],
      [`/api/v1/proposals/${d.id}/edit`, { changes: { subject: 'Approved by me' } }, d.id],
      [`/api/v1/proposals/${d.id}/approve`, { seenDigest: d.digest }, d.id],
    ] as const) {
      const r = await call(h, 'POST', path, { token, body });
      expect([path, r.status, r.body['reason']]).toEqual([path, 403, 'forbidden']);
      expect(await statusOf(id)).toBe('pending');
    }
  });

  it("another agent's proposal of the same tenant is not_found for it, like a missing id", async () => {
    const p = await payment();
    const other = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'red-team-other' });
    for (const path of [`/api/v1/proposals/${p.id}`, `/api/v1/proposals/${p.id}/audit`]) {
      const r = await call(h, 'GET', path, { token: other });
      expect([path, r.status, r.body['reason']]).toEqual([path, 404, 'not_found']);
    }
    const approve = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token: other,
      body: { seenDigest: p.digest },
    });
    expect([approve.status, approve.body['reason']]).toEqual([404, 'not_found']);
    expect(await statusOf(p.id)).toBe('pending');
  });

  it('a bearer token is no console session: a console approval with it executes nothing', async () => {
    const p = await payment();
    const r = await fetch(`${h.url}/proposals/${p.id}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        authorization: `Bearer ${h.tenants.acme.agentToken}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ digest: p.digest, csrf: 'x' }).toString(),
    });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe(`/login?next=${encodeURIComponent(`/proposals/${p.id}`)}`);
    expect(await statusOf(p.id)).toBe('pending');
  });
});

describe('a viewer never decides', () => {
  it('API approve and edit are 403 forbidden', async () => {
    const token = h.tenants.acme.operators.viewer.token;
    const p = await payment();
    const d = await draft();
    const approve = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token,
      body: { seenDigest: p.digest },
    });
    expect([approve.status, approve.body['reason']]).toEqual([403, 'forbidden']);
    const edit = await call(h, 'POST', `/api/v1/proposals/${d.id}/edit`, {
      token,
      body: { changes: { subject: 'Viewer was here' } },
    });
    expect([edit.status, edit.body['reason']]).toEqual([403, 'forbidden']);
    expect([await statusOf(p.id), await statusOf(d.id)]).toEqual(['pending', 'pending']);
  });

  it('console decline and edit posts are 403 forbidden', async () => {
    const viewer = await signedIn('viewer');
    const csrf = await viewer.csrf();
    const p = await payment();
    const d = await draft();
    const decline = await viewer.post(`/proposals/${p.id}/decline`, { csrf, reason: 'no' });
    expect(decline.status).toBe(403);
    expect(reasons(decline.html)).toContain('forbidden');
    const edit = await viewer.post(`/proposals/${d.id}/edit`, { csrf, 'field.subject': 'Viewer was here' });
    expect(edit.status).toBe(403);
    expect(reasons(edit.html)).toContain('forbidden');
    expect([await statusOf(p.id), await statusOf(d.id)]).toEqual(['pending', 'pending']);
  });
});

describe("another tenant's operator", () => {
  it("gets not_found for the page and every console decision on acme's proposal", async () => {
    const p = await payment();
    const d = await draft();
    const globex = await signedIn('admin', 'globex');
    const csrf = await globex.csrf();
    const page = await globex.get(`/proposals/${p.id}`);
    expect(page.status).toBe(404);
    expect(reasons(page.html)).toEqual(['not_found']);
    expect(page.html).not.toContain(p.digest);
    for (const [path, fields] of [
      [`/proposals/${p.id}/approve`, { csrf, digest: p.digest }],
      [`/proposals/${p.id}/decline`, { csrf, reason: 'cross-tenant' }],
      [`/proposals/${d.id}/edit`, { csrf, 'field.subject': 'From globex' }],
      [`/proposals/${p.id}/reconcile`, { csrf }],
    ] as const) {
      const r = await globex.post(path, fields);
      expect([path, r.status, reasons(r.html)]).toEqual([path, 404, ['not_found']]);
    }
    expect([await statusOf(p.id), await statusOf(d.id)]).toEqual(['pending', 'pending']);
  });

  it('never finds the proposal by searching for its id or hash, and its lists and history leave it out', async () => {
    const p = await payment();
    const globex = await signedIn('admin', 'globex');
    for (const path of [
      `/?q=${p.id}`,
      `/?q=${p.short}`,
      '/?status=recent',
      `/history?q=${p.id}`,
      '/history',
    ]) {
      const r = await globex.get(path);
      expect([path, r.status]).toEqual([path, 200]);
      // The search box repeats what was typed; no row links to the proposal or shows its hash.
      expect(r.html, path).not.toContain(`/proposals/${p.id}`);
      expect(r.html, path).not.toContain(p.digest);
    }
    const list = await call(h, 'GET', `/api/v1/proposals?runId=run-test-1&limit=200`, {
      token: h.tenants.globex.operators.admin.token,
    });
    expect((list.body['items'] as { id: string }[]).map((i) => i.id)).not.toContain(p.id);
    const audit = await call(h, 'GET', `/api/v1/proposals/${p.id}/audit?exceptStep=denied`, {
      token: h.tenants.globex.operators.viewer.token,
    });
    expect([audit.status, audit.body['reason']]).toEqual([404, 'not_found']);
  });
});

describe('the digest the approver saw', () => {
  it("a stale digest (before an edit) or another proposal's digest is 409 stale_view; a malformed one 422 invalid_digest", async () => {
    const token = h.tenants.acme.operators.approver.token;
    const p = await payment();
    const other = await payment();
    const d = await draft();
    const edited = await call(h, 'POST', `/api/v1/proposals/${d.id}/edit`, {
      token: h.tenants.acme.operators.admin.token,
      body: { changes: { subject: 'Edited' } },
    });
    expect(edited.status).toBe(201);
    const newId = edited.body['id'] as string;
    for (const [id, seenDigest, status, reason] of [
      [p.id, other.digest, 409, 'stale_view'],
      [newId, d.digest, 409, 'stale_view'],
      [p.id, p.digest.toUpperCase(), 422, 'invalid_digest'],
      [p.id, p.short, 422, 'invalid_digest'],
      [p.id, `${p.digest} `, 422, 'invalid_digest'],
    ] as const) {
      const r = await call(h, 'POST', `/api/v1/proposals/${id}/approve`, { token, body: { seenDigest } });
      expect([seenDigest, r.status, r.body['reason']]).toEqual([seenDigest, status, reason]);
    }
    const console = await signedIn('approver');
    const r = await console.post(`/proposals/${p.id}/approve`, {
      csrf: await console.csrf(),
      digest: other.digest,
    });
    expect(r.status).toBe(409);
    expect(reasons(r.html)).toContain('stale_view');
    expect([await statusOf(p.id), await statusOf(newId)]).toEqual(['pending', 'pending']);
  });
});

describe('console posts need the session, its CSRF token and the same origin', () => {
  it('decline, edit, grant and revoke posts without a token, with another session’s, or from another origin are 403 cross_site_request', async () => {
    const admin = await signedIn('admin');
    const csrf = await admin.csrf();
    const otherCsrf = await (await signedIn('approver')).csrf();
    const p = await payment();
    const d = await draft();
    const grantFields = {
      subject: 'agent:acme-assistant',
      operations: 'invoice.pay',
      resource: 'invoice:*',
      constraints: '{}',
      capField: '',
      capTotal: '',
      capUses: '1',
      expiresAt: new Date(h.clock.now() + 3_600_000).toISOString().slice(0, 16),
      note: '',
    };
    const forms: [string, Record<string, string>][] = [
      [`/proposals/${p.id}/decline`, { reason: 'csrf' }],
      [`/proposals/${d.id}/edit`, { 'field.subject': 'Forged' }],
      ['/grants', grantFields],
      ['/grants/grt_00000000000000000000000000/revoke', {}],
    ];
    const tricks: [string, (f: Record<string, string>) => Record<string, string>, Record<string, string>][] =
      [
        ['no token', (f) => f, {}],
        ['another session’s token', (f) => ({ ...f, csrf: otherCsrf }), {}],
        ['a cross-site Origin', (f) => ({ ...f, csrf }), { origin: 'https://evil.test' }],
        [
          'a cross-site Origin that claims same-origin',
          (f) => ({ ...f, csrf }),
          { origin: 'https://evil.test', 'sec-fetch-site': 'same-origin' },
        ],
        [
          'Origin null without Sec-Fetch-Site',
          (f) => ({ ...f, csrf }),
          { origin: 'null', 'sec-fetch-site': '' },
        ],
        ['Sec-Fetch-Site none', (f) => ({ ...f, csrf }), { 'sec-fetch-site': 'none' }],
      ];
    for (const [path, fields] of forms) {
      for (const [name, withCsrf, headers] of tricks) {
        const cleaned = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== ''));
        if (headers['sec-fetch-site'] === '') {
          // The client adds Sec-Fetch-Site by default: send this one without it.
          const r = await fetch(`${h.url}${path}`, {
            method: 'POST',
            redirect: 'manual',
            headers: {
              cookie: admin.cookieHeader,
              'content-type': 'application/x-www-form-urlencoded',
              ...cleaned,
            },
            body: new URLSearchParams(withCsrf(fields)).toString(),
          });
          const html = await r.text();
          expect([path, name, r.status, reasons(html)]).toEqual([path, name, 403, ['cross_site_request']]);
          continue;
        }
        const r = await admin.post(path, withCsrf(fields), cleaned);
        expect([path, name, r.status, reasons(r.html)]).toEqual([path, name, 403, ['cross_site_request']]);
      }
    }
    expect([await statusOf(p.id), await statusOf(d.id)]).toEqual(['pending', 'pending']);
    expect(await h.engine.grants.list('acme')).toEqual([]);
  });

  it("the API with a session cookie refuses another session's X-CSRF-Token (403 cross_site_request)", async () => {
    const approver = await signedIn('approver');
    const otherCsrf = await (await signedIn('admin')).csrf();
    const p = await payment();
    const r = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      headers: { cookie: approver.cookieHeader, 'x-csrf-token': otherCsrf },
      body: { seenDigest: p.digest },
    });
    expect([r.status, r.body['reason']]).toEqual([403, 'cross_site_request']);
    expect(await statusOf(p.id)).toBe('pending');
  });
});

describe('strings the agent and the model choose render inert', () => {
  const JS_URL = 'javascript:alert(document.cookie)';
  const ALL = `${HOSTILE.script}${HOSTILE.attribute}${HOSTILE.bidi} ${JS_URL}`;

  it('preview, run id, section and resource: escaped on the proposal page, the inbox and the history, never a javascript: link', async () => {
    const p = await proposeViaApi(h, 'acme', {
      operation: 'test.hostile',
      request: { text: ALL },
      resource: `x:${HOSTILE.attribute}`,
      runId: `run-${HOSTILE.script}`,
      section: `s-${HOSTILE.attribute}\u202E`,
    });
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    // The operator's decline note is shown back too.
    const declined = await approver.post(`/proposals/${p.id}/decline`, { csrf, reason: ALL });
    expect(declined.status).toBe(303);
    for (const path of [`/proposals/${p.id}`, '/?status=declined', `/history?q=${p.id}`]) {
      const { status, html } = await approver.get(path);
      expect([path, status]).toEqual([path, 200]);
      expect(html, path).not.toContain('<script>window');
      expect(html, path).not.toContain('<img src=x');
      expect(html, path).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B]/);
      expect(html, path).not.toMatch(/(href|src|action|formaction)\s*=\s*"?\s*javascript:/i);
      expect(html, path).toContain('&lt;img src=x onerror=');
    }
    const page = (await approver.get(`/proposals/${p.id}`)).html;
    expect(page).toContain('&lt;script&gt;window.__pwned = 1; alert(1)&lt;/script&gt;');
    expect(page).toContain('run-&lt;script&gt;window.__pwned');
    expect(page).toContain('⟦U+202E⟧');
  });

  it('the edit form carries the model’s values escaped inside its fields', async () => {
    const p = await proposeViaApi(h, 'acme', {
      operation: 'test.hostile',
      request: { text: ALL },
      resource: 'x:edit',
    });
    const { html } = await (await signedIn('approver')).get(`/proposals/${p.id}`);
    const form = html.slice(html.indexOf(`action="/proposals/${p.id}/edit"`));
    expect(form).toContain('name="field.text"');
    expect(form.slice(0, form.indexOf('</form>'))).not.toContain('"><img');
    expect(form.slice(0, form.indexOf('</form>'))).toContain('&quot;&gt;&lt;img src=x onerror=');
  });
});

describe('sessions and tokens that should no longer work', () => {
  it('a revoked operator token cannot approve (401 unauthenticated)', async () => {
    const token = await h.directory.issueOperatorToken({ email: h.tenants.acme.operators.approver.email });
    await h.directory.revokeToken(token);
    const p = await payment();
    const r = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token,
      body: { seenDigest: p.digest },
    });
    expect([r.status, r.body['reason']]).toEqual([401, 'unauthenticated']);
    expect(await statusOf(p.id)).toBe('pending');
  });

  it('a disabled or deleted operator: its API token is 401 unauthenticated and its session leads to the login page', async () => {
    for (const how of ['disabled', 'deleted'] as const) {
      const email = `gone-${how}@acme.test`;
      const password = `pw-gone-${how}-0123456789`;
      await h.directory.addOperator({ tenant: 'acme', email, password, roles: ['approver'] });
      const token = await h.directory.issueOperatorToken({ email });
      const browser = new ConsoleClient(h.url);
      expect((await browser.login(email, password)).status).toBe(303);
      const csrf = await browser.csrf();
      await h.store.transaction((tx) =>
        how === 'disabled'
          ? tx.local.run('UPDATE countersign_operators SET disabled_at = ? WHERE email = ?', [
              h.clock.now(),
              email,
            ])
          : tx.local.run('DELETE FROM countersign_operators WHERE email = ?', [email]),
      );
      const p = await payment();
      const api = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
        token,
        body: { seenDigest: p.digest },
      });
      expect([how, api.status, api.body['reason']]).toEqual([how, 401, 'unauthenticated']);
      const form = await browser.post(`/proposals/${p.id}/approve`, { csrf, digest: p.digest });
      expect([how, form.status, form.location]).toEqual([
        how,
        303,
        `/login?next=${encodeURIComponent(`/proposals/${p.id}`)}`,
      ]);
      expect(await statusOf(p.id)).toBe('pending');
    }
  });

  it('an expired session cookie cannot approve through the API either (401 unauthenticated)', async () => {
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    h.clock.advance(31 * 60_000);
    const p = await payment();
    const r = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      headers: { cookie: approver.cookieHeader, 'x-csrf-token': csrf },
      body: { seenDigest: p.digest },
    });
    expect([r.status, r.body['reason']]).toEqual([401, 'unauthenticated']);
    expect(await statusOf(p.id)).toBe('pending');
  });
});

describe('oversized and malformed bodies get a named 4xx, never a 500', () => {
  it('10 MB of JSON, declared or chunked, is 413 body_too_large; no content type is 415', async () => {
    const p = await payment();
    const headers = {
      authorization: `Bearer ${h.tenants.acme.operators.approver.token}`,
      'content-type': 'application/json',
    };
    const huge = `{"reason":"${'x'.repeat(10_000_000)}"}`;
    const path = `/api/v1/proposals/${p.id}/decline`;
    const declared = await raw(h, path, {
      method: 'POST',
      headers: { ...headers, 'content-length': String(huge.length) },
      body: huge,
    });
    expect([declared.status, declared.body['reason']]).toEqual([413, 'body_too_large']);
    const chunked = await raw(h, path, {
      method: 'POST',
      headers: { ...headers, 'transfer-encoding': 'chunked' },
      body: huge,
    });
    expect([chunked.status, chunked.body['reason']]).toEqual([413, 'body_too_large']);
    const untyped = await raw(h, path, {
      method: 'POST',
      headers: { authorization: headers.authorization },
      body: '{}',
    });
    expect([untyped.status, untyped.body['reason']]).toEqual([415, 'unsupported_media_type']);
    expect(await statusOf(p.id)).toBe('pending');
  });

  it('a 10 MB console form is 413 body_too_large; a JSON body to a console form is 415', async () => {
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    const p = await payment();
    const big = await approver.post(`/proposals/${p.id}/decline`, { csrf, reason: 'x'.repeat(10_000_000) });
    expect([big.status, reasons(big.html)]).toEqual([413, ['body_too_large']]);
    const json = await approver.post(
      `/proposals/${p.id}/approve`,
      {},
      { 'content-type': 'application/json', 'x-body': '1' },
    );
    expect([json.status, reasons(json.html)]).toEqual([415, ['unsupported_media_type']]);
    expect(await statusOf(p.id)).toBe('pending');
  });
});

describe('query strings', () => {
  it('a proposal list cursor the engine never issued is 422 invalid_request, not a silent first page', async () => {
    const token = h.tenants.acme.operators.viewer.token;
    for (const cursor of ['zzz', '%00', Buffer.from('1~prp_x; DROP').toString('base64url')]) {
      const r = await call(h, 'GET', `/api/v1/proposals?cursor=${cursor}`, { token });
      expect([cursor, r.status, r.body['reason']]).toEqual([cursor, 422, 'invalid_request']);
    }
    await payment();
    await payment();
    const first = await call(h, 'GET', '/api/v1/proposals?limit=1', { token });
    const next = first.body['nextCursor'] as string;
    const second = await call(h, 'GET', `/api/v1/proposals?limit=1&cursor=${next}`, { token });
    expect(second.status).toBe(200);
  });
});

describe('path tricks', () => {
  it('dot segments, encoded slashes and bad escapes never reach another route', async () => {
    const p = await payment();
    const agent = { authorization: `Bearer ${h.tenants.acme.agentToken}` };
    const approver = { authorization: `Bearer ${h.tenants.acme.operators.approver.token}` };
    // `..` is resolved before routing: the agent lands on the grants list and is refused there.
    // So is `%2E%2E` as a whole segment (WHATWG URL reads it as `..`).
    for (const path of ['/api/v1/proposals/../grants', '/api/v1/proposals/%2E%2E/grants']) {
      const dots = await raw(h, path, { headers: agent });
      expect([path, dots.status, dots.body['reason']]).toEqual([path, 403, 'forbidden']);
    }
    for (const path of [
      '/api/v1/proposals/%2e%2e%2fgrants',
      `/api/v1/proposals/${p.id}%2Faudit`,
      `/api/v1/proposals/${p.id}%2f..%2f..%2fgrants`,
      '/api/v1/proposals/%ff',
      '/api/v1/proposals/%E0%A4%A',
    ]) {
      const r = await raw(h, path, { headers: approver });
      expect([path, r.status, r.body['reason']]).toEqual([path, 404, 'not_found']);
    }
    const approve = await raw(h, `/api/v1/proposals/..%2f${p.id}/approve`, {
      method: 'POST',
      headers: { ...approver, 'content-type': 'application/json' },
      body: JSON.stringify({ seenDigest: p.digest }),
    });
    expect([approve.status, approve.body['reason']]).toEqual([404, 'not_found']);
    expect(await statusOf(p.id)).toBe('pending');
  });

  for (const backend of BACKENDS) {
    it(`ids with NUL or 8 000 characters are 404 not_found on the API and the console (${backend})`, async () => {
      const on = backend === 'sqlite' ? h : pgH;
      const p = await payment(on);
      const token = on.tenants.acme.operators.admin.token;
      const console = await signedIn('admin', 'acme', on);
      const csrf = await console.csrf();
      for (const id of [`${p.id}%00`, 'prp_%00', `prp_${'a'.repeat(8_000)}`]) {
        for (const [method, path, body] of [
          ['GET', `/api/v1/proposals/${id}`, undefined],
          ['GET', `/api/v1/proposals/${id}/audit`, undefined],
          ['POST', `/api/v1/proposals/${id}/approve`, { seenDigest: p.digest }],
          ['POST', `/api/v1/proposals/${id}/decline`, {}],
          ['POST', `/api/v1/proposals/${id}/edit`, { changes: {} }],
          ['POST', `/api/v1/proposals/${id}/reconcile`, {}],
          ['GET', `/api/v1/grants/${id}`, undefined],
        ] as const) {
          const r = await call(on, method, path, { token, ...(body ? { body } : {}) });
          expect([path.slice(0, 60), r.status, r.body['reason']]).toEqual([
            path.slice(0, 60),
            404,
            'not_found',
          ]);
        }
        const page = await console.get(`/proposals/${id}`);
        expect([page.status, reasons(page.html)]).toEqual([404, ['not_found']]);
        for (const action of ['approve', 'decline', 'reconcile']) {
          const r = await console.post(`/proposals/${id}/${action}`, {
            csrf,
            ...(action === 'approve' ? { digest: p.digest } : {}),
          });
          expect([action, r.status, reasons(r.html)]).toEqual([action, 404, ['not_found']]);
        }
      }
      expect(await statusOf(p.id, on)).toBe('pending');
    });
  }
});

describe('text PostgreSQL cannot hold (NUL) is refused by name, never a 500', () => {
  for (const backend of BACKENDS) {
    it(`in the run id, section, resource, a decline note and a grant (${backend})`, async () => {
      const on = backend === 'sqlite' ? h : pgH;
      const agent = on.tenants.acme.agentToken;
      for (const extra of [{ runId: 'run\u0000x' }, { section: 'sec\u0000' }, { resource: 'x:\u0000' }]) {
        const r = await call(on, 'POST', '/api/v1/proposals', {
          token: agent,
          body: {
            operation: 'test.hostile',
            request: { text: 'hi' },
            runId: 'run-nul',
            resource: 'x:1',
            ...extra,
          },
        });
        expect([JSON.stringify(extra), r.status, r.body['reason']]).toEqual([
          JSON.stringify(extra),
          422,
          'invalid_request',
        ]);
      }
      const grant = {
        subject: 'agent:acme-assistant',
        operations: ['invoice.pay'],
        resource: 'invoice:*',
        constraints: {},
        cap: { uses: 1 },
        expiresAt: new Date(on.clock.now() + 60_000).toISOString(),
      };
      for (const extra of [
        { subject: 'agent:a\u0000' },
        { resource: 'invoice:\u0000*' },
        { note: 'n\u0000' },
      ]) {
        const r = await call(on, 'POST', '/api/v1/grants', {
          token: on.tenants.acme.operators.admin.token,
          body: { ...grant, ...extra },
        });
        expect([JSON.stringify(extra), r.status, r.body['reason']]).toEqual([
          JSON.stringify(extra),
          422,
          'invalid_request',
        ]);
      }
      expect(await on.engine.grants.list('acme')).toEqual([]);
      const p = await payment(on);
      const api = await call(on, 'POST', `/api/v1/proposals/${p.id}/decline`, {
        token: on.tenants.acme.operators.approver.token,
        body: { reason: 'no\u0000pe' },
      });
      expect([api.status, api.body['reason']]).toEqual([422, 'invalid_request']);
      const console = await signedIn('approver', 'acme', on);
      const form = await console.post(`/proposals/${p.id}/decline`, {
        csrf: await console.csrf(),
        reason: 'no\u0000pe',
      });
      expect([form.status, reasons(form.html)]).toEqual([400, ['invalid_form']]);
      expect(await statusOf(p.id, on)).toBe('pending');
    });

    it(`a preview holding NUL does not break the inbox's search or sort for the tenant (${backend})`, async () => {
      const on = backend === 'sqlite' ? h : pgH;
      const poisoned = await proposeViaApi(on, 'acme', {
        operation: 'test.hostile',
        request: { text: 'poison\u0000title' },
        resource: 'x:nul',
      });
      const approver = await signedIn('approver', 'acme', on);
      for (const path of [
        '/?q=poison',
        `/?q=${poisoned.short}`,
        '/?sort=amount',
        '/?q=anything&sort=amount',
      ]) {
        const r = await approver.get(path);
        expect([path, r.status]).toEqual([path, 200]);
      }
      expect((await approver.get('/?q=poison')).html).toContain(poisoned.id);
      const api = await call(on, 'GET', '/api/v1/proposals?limit=5', {
        token: on.tenants.acme.operators.viewer.token,
      });
      expect(api.status).toBe(200);
    });
  }
});
