import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventStreams } from '../../src/server/index.js';
import { ConsoleClient, hidden } from './support/console-client.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';
import { openSse, type SseStream } from './support/sse-client.js';

// The security team's second pass from the outside, at the operator's desk: a signed-in viewer, an
// approver of another tenant, a careless click and a hostile page in the same browser. Each test
// pins one hole that was found (and fixed) or one attack that held, with exact statuses and
// reason codes. Over SQLite: nothing here depends on the backend.

let h: ServerHarness;
const streams = new EventStreams({ pollMs: 25, heartbeatMs: 60_000 });
const open: SseStream[] = [];
beforeAll(async () => {
  h = await serverHarness({ notifications: true, events: streams });
});
afterAll(async () => {
  for (const s of open) s.close();
  for (let i = 0; i < 100 && streams.open > 0; i++) await new Promise((r) => setTimeout(r, 20));
  await h?.close();
});

type Tenant = 'acme' | 'globex';
type Role = 'approver' | 'viewer' | 'admin';

async function signedIn(role: Role, tenant: Tenant = 'acme') {
  const client = new ConsoleClient(h.url);
  const op = h.tenants[tenant].operators[role];
  expect((await client.login(op.email, op.password)).status).toBe(303);
  return client;
}

function payment(tenant: Tenant = 'acme') {
  const invoice = freshInvoice(h.world, tenant);
  return proposeViaApi(h, tenant, {
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    resource: `invoice:${invoice}`,
  });
}

function grantBody() {
  return {
    subject: 'agent:acme-assistant',
    operations: ['invoice.pay'],
    resource: 'invoice:*',
    constraints: {},
    cap: { uses: 1 },
    expiresAt: new Date(h.clock.now() + 3_600_000).toISOString(),
  };
}

/** Every reason code a console page shows. */
function reasons(html: string): string[] {
  return [...html.matchAll(/<code class="reason-code">([a-z_]+)<\/code>/g)].map((m) => m[1]!);
}

/** A page with its per-response nonce taken out, so two answers compare byte for byte. */
function withoutNonce(html: string): string {
  return html.replace(/nonce="[^"]*"/g, 'nonce=""');
}

/** An id of the same shape and length as `id` that names nothing. */
function missingLike(id: string): string {
  return `${id.slice(0, 4)}${'0'.repeat(id.length - 4)}`;
}

async function events(headers: Record<string, string>): Promise<SseStream> {
  const stream = await openSse(h.url, '/api/v1/events', headers);
  open.push(stream);
  return stream;
}

/** Reads until the stream ends; fails if it is still open after `ms`, or if it sends `forbiddenId`. */
async function endsWithout(stream: SseStream, forbiddenId: string | undefined, ms = 3000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error('the stream is still open');
    let message: Awaited<ReturnType<SseStream['next']>>;
    try {
      message = await stream.next(left);
    } catch (error) {
      if (error instanceof Error && error.message === 'the stream ended') return;
      throw error;
    }
    if (message.kind === 'event' && forbiddenId !== undefined)
      expect(JSON.parse(message.data).proposalId).not.toBe(forbiddenId);
  }
}

describe('a live event stream ends with the credentials it was opened with', () => {
  it('signing out ends the console session’s stream; the old cookie is then 401 unauthenticated everywhere', async () => {
    const viewer = await signedIn('viewer');
    const cookie = viewer.cookieHeader;
    const stream = await events({ cookie });
    expect(stream.status).toBe(200);
    const before = await payment();
    expect(JSON.parse((await stream.nextEvent()).data).proposalId).toBe(before.id);

    expect((await viewer.post('/logout', { csrf: await viewer.csrf() })).status).toBe(303);
    const after = await payment();
    await endsWithout(stream, after.id);

    const again = await events({ cookie });
    expect([again.status, again.problem?.['reason']]).toEqual([401, 'unauthenticated']);
    const api = await call(h, 'GET', `/api/v1/proposals/${after.id}`, { headers: { cookie } });
    expect([api.status, api.body['reason']]).toEqual([401, 'unauthenticated']);
    const page = await fetch(`${h.url}/proposals/${after.id}`, { headers: { cookie }, redirect: 'manual' });
    expect([page.status, page.headers.get('location')]).toEqual([
      303,
      `/login?next=${encodeURIComponent(`/proposals/${after.id}`)}`,
    ]);
  });

  it('revoking an operator token ends its stream before the next event, and a reconnect is 401 unauthenticated', async () => {
    const token = await h.directory.issueOperatorToken({ email: h.tenants.acme.operators.viewer.email });
    const stream = await events({ authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    expect(await h.directory.revokeToken(token)).toBe(true);
    const after = await payment();
    await endsWithout(stream, after.id);
    const again = await events({ authorization: `Bearer ${token}` });
    expect([again.status, again.problem?.['reason']]).toEqual([401, 'unauthenticated']);
  });

  it('disabling the operator ends the stream of its token', async () => {
    const email = 'desk-disabled@acme.test';
    await h.directory.addOperator({
      tenant: 'acme',
      email,
      password: 'pw-desk-disabled-0123456789',
      roles: ['viewer'],
    });
    const token = await h.directory.issueOperatorToken({ email });
    const stream = await events({ authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    await h.store.transaction((tx) =>
      tx.local.run('UPDATE countersign_operators SET disabled_at = ? WHERE email = ?', [
        h.clock.now(),
        email,
      ]),
    );
    const after = await payment();
    await endsWithout(stream, after.id);
  });

  it('an open stream does not keep an idle session alive: it ends when the session’s idle timeout passes', async () => {
    const viewer = await signedIn('viewer');
    const stream = await events({ cookie: viewer.cookieHeader });
    expect(stream.status).toBe(200);
    // 29 minutes of nobody at the keyboard: the session still stands, the stream still delivers.
    h.clock.advance(29 * 60_000);
    const during = await payment();
    expect(JSON.parse((await stream.nextEvent()).data).proposalId).toBe(during.id);
    // Past the 30-minute idle timeout (counted from the last request, not from the stream's reads).
    h.clock.advance(2 * 60_000);
    const after = await payment();
    await endsWithout(stream, after.id);
    const again = await events({ cookie: viewer.cookieHeader });
    expect([again.status, again.problem?.['reason']]).toEqual([401, 'unauthenticated']);
  });
});

describe('a double-submitted Approve', () => {
  it('executes once; the second post shows the stored outcome with the reason replayed', async () => {
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    const p = await payment();
    const calls = h.world.provider.calls;
    const first = await approver.post(`/proposals/${p.id}/approve`, { csrf, digest: p.digest });
    expect([first.status, first.location]).toEqual([303, `/proposals/${p.id}`]);
    const firstPage = await approver.get(first.location!);
    expect(firstPage.html).toContain('Approved. The contract was executed once');
    expect(reasons(firstPage.html)).toEqual([]);

    const second = await approver.post(`/proposals/${p.id}/approve`, { csrf, digest: p.digest });
    expect([second.status, second.location]).toEqual([303, `/proposals/${p.id}`]);
    const secondPage = await approver.get(second.location!);
    expect(secondPage.html).toContain('This proposal was already decided');
    expect(reasons(secondPage.html)).toEqual(['replayed']);
    expect(h.world.provider.calls).toBe(calls + 1);
  });

  it('two Approve posts at the same instant run the payment once', async () => {
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    const p = await payment();
    const calls = h.world.provider.calls;
    const both = await Promise.all([
      approver.post(`/proposals/${p.id}/approve`, { csrf, digest: p.digest }),
      approver.post(`/proposals/${p.id}/approve`, { csrf, digest: p.digest }),
    ]);
    expect(both.map((r) => r.status)).toEqual([303, 303]);
    expect(h.world.provider.calls).toBe(calls + 1);
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('succeeded');
  });
});

describe('another tenant’s ids read exactly like missing ones, byte for byte', () => {
  it('grants and deliveries over the API: same status, headers that matter and body', async () => {
    const grant = await call(h, 'POST', '/api/v1/grants', {
      token: h.tenants.globex.operators.admin.token,
      body: grantBody(),
    });
    expect(grant.status).toBe(201);
    const grantId = grant.body['id'] as string;
    await payment('globex');
    const listed = await call(h, 'GET', '/api/v1/deliveries', {
      token: h.tenants.globex.operators.admin.token,
    });
    const deliveryId = (listed.body['items'] as { id: string }[])[0]!.id;
    const token = h.tenants.acme.operators.admin.token;
    for (const [method, id, path] of [
      ['GET', grantId, (target: string) => `/api/v1/grants/${target}`],
      ['POST', grantId, (target: string) => `/api/v1/grants/${target}/revoke`],
      ['POST', deliveryId, (target: string) => `/api/v1/deliveries/${target}/redeliver`],
    ] as const) {
      const answer = async (target: string) => {
        const r = await fetch(`${h.url}${path(target)}`, {
          method,
          headers: { authorization: `Bearer ${token}` },
        });
        return [r.status, r.headers.get('content-type'), r.headers.get('content-length'), await r.text()];
      };
      const foreign = await answer(id);
      expect(foreign.slice(0, 1)).toEqual([404]);
      expect(JSON.parse(foreign[3] as string).reason).toBe('not_found');
      expect(foreign).toEqual(await answer(missingLike(id)));
    }
    expect((await h.engine.grants.list('globex')).find((g) => g.id === grantId)?.state).toBe('live');
  });

  it('console pages and decisions: the same 404 page for a foreign and a missing proposal, grant or delivery', async () => {
    const p = await payment('globex');
    const grant = await call(h, 'POST', '/api/v1/grants', {
      token: h.tenants.globex.operators.admin.token,
      body: grantBody(),
    });
    const grantId = grant.body['id'] as string;
    const listed = await call(h, 'GET', '/api/v1/deliveries', {
      token: h.tenants.globex.operators.admin.token,
    });
    const deliveryId = (listed.body['items'] as { id: string }[])[0]!.id;
    const admin = await signedIn('admin');
    const csrf = await admin.csrf();
    const cases: [string, (id: string) => Promise<{ status: number; html: string }>][] = [
      [p.id, (id) => admin.get(`/proposals/${id}`)],
      [p.id, (id) => admin.post(`/proposals/${id}/approve`, { csrf, digest: p.digest })],
      [p.id, (id) => admin.post(`/proposals/${id}/decline`, { csrf, reason: 'no' })],
      [p.id, (id) => admin.post(`/proposals/${id}/edit`, { csrf, 'field.invoice_id': 'inv-1' })],
      [p.id, (id) => admin.post(`/proposals/${id}/reconcile`, { csrf })],
      [grantId, (id) => admin.post(`/grants/${id}/revoke`, { csrf })],
      [deliveryId, (id) => admin.post(`/deliveries/${id}/redeliver`, { csrf })],
    ];
    for (const [id, send] of cases) {
      const foreign = await send(id);
      const missing = await send(missingLike(id));
      expect([id, foreign.status, reasons(foreign.html)]).toEqual([id, 404, ['not_found']]);
      expect([missing.status, withoutNonce(missing.html)]).toEqual([404, withoutNonce(foreign.html)]);
    }
    expect((await h.engine.proposals.get('globex', p.id))?.status).toBe('pending');
    expect((await h.engine.grants.list('globex')).find((g) => g.id === grantId)?.state).toBe('live');
  });
});

describe('every refusal on the console names its reason code', () => {
  it('a viewer creating or revoking a grant: 403 forbidden; an admin’s invalid grant: 422 invalid_request', async () => {
    const grant = await call(h, 'POST', '/api/v1/grants', {
      token: h.tenants.acme.operators.admin.token,
      body: grantBody(),
    });
    const grantsBefore = await h.engine.grants.list('acme');
    const viewer = await signedIn('viewer');
    const csrf = await viewer.csrf();
    const fields = {
      csrf,
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
    const create = await viewer.post('/grants', fields);
    expect([create.status, reasons(create.html)]).toEqual([403, ['forbidden']]);
    const revoke = await viewer.post(`/grants/${grant.body['id']}/revoke`, { csrf });
    expect([revoke.status, reasons(revoke.html)]).toEqual([403, ['forbidden']]);
    const admin = await signedIn('admin');
    const invalid = await admin.post('/grants', { ...fields, csrf: await admin.csrf(), constraints: '[1]' });
    expect([invalid.status, reasons(invalid.html)]).toEqual([422, ['invalid_request']]);
    expect(await h.engine.grants.list('acme')).toEqual(grantsBefore);
  });

  it('an inbox link with a parameter it cannot honour: 400 invalid_request', async () => {
    const viewer = await signedIn('viewer');
    for (const query of ['?sort=evil', '?status=__proto__', `?q=${'x'.repeat(400)}`, '?cursor=zzz']) {
      const r = await viewer.get(`/${query}`);
      expect([query.slice(0, 20), r.status, reasons(r.html)]).toEqual([
        query.slice(0, 20),
        400,
        ['invalid_request'],
      ]);
    }
    // History pages the same cursors: one it did not make is named, not taken for the first page.
    const forged = await viewer.get('/history?cursor=zzz');
    expect([forged.status, reasons(forged.html)]).toEqual([400, ['invalid_request']]);
    const wellFormed = Buffer.from('1~prp_abc').toString('base64url');
    expect((await viewer.get(`/history?cursor=${wellFormed}`)).status).toBe(200);
    expect((await viewer.get(`/?cursor=${wellFormed}`)).status).toBe(200);
  });

  it('sign-in: a wrong password is 401 unauthenticated, a form without its login cookie 403 cross_site_request', async () => {
    const op = h.tenants.acme.operators.viewer;
    const wrong = await new ConsoleClient(h.url).login(op.email, 'not the password at all');
    expect([wrong.status, reasons(wrong.html)]).toEqual([401, ['unauthenticated']]);
    const cookieless = await new ConsoleClient(h.url).post('/login', {
      csrf: 'x'.repeat(43),
      email: op.email,
      password: op.password,
    });
    expect([cookieless.status, reasons(cookieless.html)]).toEqual([403, ['cross_site_request']]);
  });
});

describe('what held', () => {
  it('every cookie the console sets is __Host-, Secure, HttpOnly, SameSite=Strict, Path=/ and has no Domain', async () => {
    const client = new ConsoleClient(h.url);
    const lines: string[] = [];
    const form = await client.get('/login');
    lines.push(...form.response.headers.getSetCookie());
    const op = h.tenants.acme.operators.approver;
    const login = await client.post('/login', {
      csrf: hidden(form.html, 'csrf'),
      email: op.email,
      password: op.password,
    });
    lines.push(...login.response.headers.getSetCookie());
    const p = await payment();
    const approve = await client.post(`/proposals/${p.id}/approve`, {
      csrf: await client.csrf(),
      digest: p.digest,
    });
    lines.push(...approve.response.headers.getSetCookie());
    const names = lines.map((l) => l.slice(0, l.indexOf('=')));
    expect(names.sort()).toEqual([
      '__Host-countersign_device',
      '__Host-countersign_flash',
      '__Host-countersign_login',
      '__Host-countersign_session',
    ]);
    for (const line of lines) {
      expect(line).toMatch(/; Secure/);
      expect(line).toMatch(/; HttpOnly/);
      expect(line).toMatch(/; SameSite=Strict/);
      expect(line).toMatch(/; Path=\//);
      expect(line).not.toMatch(/Domain=/i);
    }
  });

  it('every HTML answer (pages, refusals, errors, sign-in) forbids framing and caching', async () => {
    const viewer = await signedIn('viewer');
    const p = await payment();
    const answers: [string, Response][] = [
      ['login', (await new ConsoleClient(h.url).get('/login')).response],
      ['inbox', (await viewer.get('/')).response],
      ['proposal', (await viewer.get(`/proposals/${p.id}`)).response],
      ['history', (await viewer.get('/history')).response],
      ['grants', (await viewer.get('/grants')).response],
      ['403 deliveries', (await viewer.get('/deliveries')).response],
      ['404 page', (await viewer.get('/no-such-page')).response],
      ['404 proposal', (await viewer.get('/proposals/prp_missing')).response],
      ['400 inbox', (await viewer.get('/?sort=evil')).response],
      [
        '403 decline',
        (await viewer.post(`/proposals/${p.id}/decline`, { csrf: await viewer.csrf() })).response,
      ],
      ['403 csrf', (await viewer.post(`/proposals/${p.id}/decline`, { csrf: 'forged' })).response],
      [
        '415 form',
        (await viewer.post(`/proposals/${p.id}/decline`, {}, { 'content-type': 'text/plain' })).response,
      ],
      [
        '401 login',
        (await new ConsoleClient(h.url).login(h.tenants.acme.operators.viewer.email, 'wrong password!'))
          .response,
      ],
    ];
    for (const [name, r] of answers) {
      expect([name, r.headers.get('content-type')]).toEqual([name, 'text/html; charset=UTF-8']);
      expect([name, r.headers.get('x-frame-options')]).toEqual([name, 'DENY']);
      expect(r.headers.get('content-security-policy'), name).toContain("frame-ancestors 'none'");
      expect([name, r.headers.get('cache-control')]).toEqual([name, 'no-store']);
    }
  });

  it('a landing path after sign-in never leaves the origin, however it is spelled', async () => {
    const op = h.tenants.acme.operators.viewer;
    for (const next of [
      '//evil.test',
      '/\\evil.test',
      'https:evil.test',
      '\\\\evil.test',
      '/\tevil.test',
      ' //evil.test',
      '/%2F%2Fevil.test',
      '/%5Cevil.test',
      '/..//evil.test',
      '/.%2F/evil.test',
      'javascript:alert(1)',
      '/@evil.test',
    ]) {
      const client = new ConsoleClient(h.url);
      const form = await client.get(`/login?next=${encodeURIComponent(next)}`);
      const r = await client.post('/login', {
        csrf: hidden(form.html, 'csrf'),
        email: op.email,
        password: op.password,
        next,
      });
      expect(r.status).toBe(303);
      expect([next, new URL(r.location!, h.url).origin]).toEqual([next, new URL(h.url).origin]);
    }
  });

  it('a hostile page’s text/plain POST, a method override or a GET to an action changes nothing', async () => {
    const approver = await signedIn('approver');
    const csrf = await approver.csrf();
    const p = await payment();
    const body = new URLSearchParams({ csrf, digest: p.digest }).toString();
    const plain = await fetch(`${h.url}/proposals/${p.id}/approve`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: approver.cookieHeader,
        'content-type': 'text/plain',
        origin: 'https://evil.test',
        'sec-fetch-site': 'cross-site',
      },
      body,
    });
    expect([plain.status, reasons(await plain.text())]).toEqual([403, ['cross_site_request']]);
    const apiPlain = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      headers: {
        cookie: approver.cookieHeader,
        'content-type': 'text/plain',
        origin: 'https://evil.test',
        'sec-fetch-site': 'cross-site',
      },
      rawBody: JSON.stringify({ seenDigest: p.digest }),
    });
    expect([apiPlain.status, apiPlain.body['reason']]).toEqual([403, 'cross_site_request']);
    const override = await approver.post(`/proposals/${p.id}/decline`, { csrf, _method: 'DELETE' });
    expect([override.status, reasons(override.html)]).toEqual([400, ['invalid_form']]);
    for (const headers of [{ 'x-http-method-override': 'POST' }, { 'x-method-override': 'POST' }]) {
      const r = await approver.get(`/proposals/${p.id}/approve?csrf=${csrf}&digest=${p.digest}`, headers);
      expect([r.status, reasons(r.html)]).toEqual([404, ['not_found']]);
    }
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
  });

  it('a tenant’s operator cannot reach another tenant’s live events by query or Last-Event-ID', async () => {
    const globex = await payment('globex');
    const token = h.tenants.acme.operators.admin.token;
    const q = await openSse(h.url, '/api/v1/events?tenant=globex', { authorization: `Bearer ${token}` });
    expect([q.status, q.problem?.['reason']]).toEqual([422, 'invalid_request']);
    const resumed = await events({ authorization: `Bearer ${token}`, 'last-event-id': '0' });
    const acme = await payment();
    // From seq 0 the acme stream replays acme's whole chain and then the new event, never globex's.
    for (;;) {
      const data = JSON.parse((await resumed.nextEvent()).data);
      expect(data.proposalId).not.toBe(globex.id);
      if (data.proposalId === acme.id) break;
    }
    resumed.close();
  });
});
