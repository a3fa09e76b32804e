import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyAudit } from '../../src/ledger/verify-audit.js';
import { ConsoleClient, hidden } from './support/console-client.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness();
});
afterAll(async () => {
  await h.close();
});

const PASSWORD = 'operators-test-password-0123';
let counter = 0;

/** A fresh operator of a tenant, with a token; so each test changes its own. */
async function newOperator(tenant: 'acme' | 'globex', roles: string[]) {
  const email = `op${++counter}-${roles.join('-')}@${tenant}.test`;
  await h.directory.addOperator({ tenant, email, password: PASSWORD, roles });
  const token = await h.directory.issueOperatorToken({ email });
  const id = (await h.directory.operatorAccounts(tenant)).find((o) => o.email === email)!.id;
  return { email, token, id };
}

const adminToken = () => h.tenants.acme.operators.admin.token;
const patch = (id: string, body: unknown, token = adminToken()) =>
  call(h, 'PATCH', `/api/v1/operators/${id}`, { token, body });
const reasonOf = (html: string) => /class="reason-code">([^<]+)</.exec(html)?.[1];

async function consoleAs(email: string): Promise<ConsoleClient> {
  const client = new ConsoleClient(h.url);
  const posted = await client.login(email, PASSWORD);
  expect(posted.status).toBe(303);
  return client;
}

async function auditOf(tenant: string, operatorId: string) {
  const { events } = await h.engine.audit.since(tenant, { afterSeq: 0, limit: 1000 });
  return events.filter((e) => e.proposalId === operatorId);
}

describe('GET /api/v1/operators', () => {
  it("lists the tenant's operators, active and disabled, without password hashes; admins only", async () => {
    const listed = await call(h, 'GET', '/api/v1/operators', { token: adminToken() });
    expect(listed.status).toBe(200);
    const items = listed.body['items'] as Record<string, unknown>[];
    const approver = items.find((o) => o['email'] === 'approver@acme.test');
    expect(approver).toEqual({
      id: expect.stringMatching(/^op_[0-9a-f]{16}$/),
      email: 'approver@acme.test',
      roles: ['approver'],
      active: true,
      sso: false,
      createdAt: new Date(h.clock.now()).toISOString(),
      disabledAt: null,
    });
    expect(items.every((o) => String(o['email']).endsWith('@acme.test'))).toBe(true);
    expect(JSON.stringify(listed.body)).not.toMatch(/scrypt|password/);

    for (const token of [
      h.tenants.acme.operators.approver.token,
      h.tenants.acme.operators.viewer.token,
      h.tenants.acme.agentToken,
    ]) {
      const refused = await call(h, 'GET', '/api/v1/operators', { token });
      expect([refused.status, refused.body['reason']]).toEqual([403, 'forbidden']);
    }
    const anonymous = await call(h, 'GET', '/api/v1/operators');
    expect([anonymous.status, anonymous.body['reason']]).toEqual([401, 'unauthenticated']);
  });
});

describe('PATCH /api/v1/operators/:id', () => {
  it('changes roles and state, answers the operator after it, and audits each change in the hash chain', async () => {
    const op = await newOperator('acme', ['viewer']);
    const promoted = await patch(op.id, { roles: ['approver', 'viewer'] });
    expect(promoted.status).toBe(200);
    expect(promoted.body).toMatchObject({
      id: op.id,
      email: op.email,
      roles: ['approver', 'viewer'],
      active: true,
      changed: true,
    });
    const disabled = await patch(op.id, { active: false });
    expect(disabled.body).toMatchObject({ active: false, changed: true, disabledAt: expect.any(String) });
    // Asking for what already is writes and audits nothing.
    const again = await patch(op.id, { active: false });
    expect(again.body).toMatchObject({ active: false, changed: false });

    const events = await auditOf('acme', op.id);
    expect(events.map((e) => [e.step, e.actor, e.detail])).toEqual([
      [
        'operator_changed',
        'user:admin@acme.test',
        { operator: op.email, roles: { from: ['viewer'], to: ['approver', 'viewer'] } },
      ],
      ['operator_changed', 'user:admin@acme.test', { operator: op.email, active: { from: true, to: false } }],
    ]);
    expect(await verifyAudit(h.store, { tenant: 'acme' })).toMatchObject({ kind: 'intact' });
    const listed = await call(h, 'GET', '/api/v1/operators', { token: adminToken() });
    expect(
      (listed.body['items'] as { id: string; active: boolean }[]).find((o) => o.id === op.id)?.active,
    ).toBe(false);
  });

  it('refuses non-admins: forbidden, nothing changed', async () => {
    const op = await newOperator('acme', ['viewer']);
    for (const token of [h.tenants.acme.operators.approver.token, h.tenants.acme.agentToken]) {
      const refused = await patch(op.id, { roles: ['admin'] }, token);
      expect([refused.status, refused.body['reason']]).toEqual([403, 'forbidden']);
    }
    expect((await h.directory.operatorAccounts('acme')).find((o) => o.id === op.id)?.roles).toEqual([
      'viewer',
    ]);
    expect(await auditOf('acme', op.id)).toEqual([]);
  });

  it("answers another tenant's operator exactly like a missing one: 404 not_found, nothing changed", async () => {
    const foreign = await newOperator('globex', ['approver']);
    const across = await patch(foreign.id, { active: false });
    const missing = await patch('op_0123456789abcdef', { active: false });
    const malformed = await patch('approver%40globex.test', { active: false });
    expect([across.status, across.body]).toEqual([
      404,
      {
        type: 'urn:countersign:problem:not_found',
        title: 'Not found',
        status: 404,
        detail: 'no such operator',
        reason: 'not_found',
        message: 'no such operator',
      },
    ]);
    expect([missing.status, missing.body]).toEqual([404, across.body]);
    expect([malformed.status, malformed.body]).toEqual([404, across.body]);
    const still = await call(h, 'GET', '/api/v1/proposals', { token: foreign.token });
    expect(still.status).toBe(200);
  });

  it('parses the body strictly: 422 invalid_request naming the field', async () => {
    const op = await newOperator('acme', ['viewer']);
    const cases: [unknown, string][] = [
      [{ active: 'no' }, '$.active'],
      [{ roles: [] }, '$.roles'],
      [{ roles: ['Approver!'] }, '$.roles[0]'],
      [{ roles: 'admin' }, '$.roles'],
      [{ active: true, email: 'x@acme.test' }, 'email'],
      [{}, 'at least one of active, roles'],
    ];
    for (const [body, named] of cases) {
      const refused = await patch(op.id, body);
      expect([refused.status, refused.body['reason']], JSON.stringify(body)).toEqual([
        422,
        'invalid_request',
      ]);
      expect(String(refused.body['message']), JSON.stringify(body)).toContain(named);
    }
    const notJson = await call(h, 'PATCH', `/api/v1/operators/${op.id}`, {
      token: adminToken(),
      rawBody: '{"active":',
    });
    expect([notJson.status, notJson.body['reason']]).toEqual([400, 'invalid_json']);
    expect(await auditOf('acme', op.id)).toEqual([]);
  });

  it('never leaves a tenant without an active admin: last_admin, for itself and for the last other one', async () => {
    // globex has one admin: they may neither demote nor disable themselves.
    const globexAdmin = h.tenants.globex.operators.admin;
    const self = (await h.directory.operatorAccounts('globex')).find((o) => o.email === globexAdmin.email)!;
    for (const body of [{ roles: ['approver'] }, { active: false }]) {
      const refused = await patch(self.id, body, globexAdmin.token);
      expect([refused.status, refused.body['reason']], JSON.stringify(body)).toEqual([409, 'last_admin']);
    }
    expect(await auditOf('globex', self.id)).toEqual([]);
    // With a second admin, the first may step down; then the second is the last one.
    const second = await newOperator('globex', ['admin']);
    expect((await patch(self.id, { roles: ['approver', 'admin'] }, globexAdmin.token)).status).toBe(200);
    const stepDown = await patch(self.id, { roles: ['approver'] }, globexAdmin.token);
    expect([stepDown.status, stepDown.body['roles']]).toEqual([200, ['approver']]);
    const last = await patch(second.id, { active: false }, second.token);
    expect([last.status, last.body['reason']]).toEqual([409, 'last_admin']);
    // The demoted admin's token lost the admin's powers on its next request.
    const demoted = await patch(second.id, { active: false }, globexAdmin.token);
    expect([demoted.status, demoted.body['reason']]).toEqual([403, 'forbidden']);
  });
});

describe('powers follow the directory on the next request', () => {
  it("a disabled operator's open console session and API token are refused on the next request", async () => {
    const op = await newOperator('acme', ['approver']);
    const browser = await consoleAs(op.email);
    expect((await browser.get('/')).status).toBe(200);
    const viaSession = () =>
      fetch(`${h.url}/api/v1/proposals`, { headers: { cookie: browser.cookieHeader } }).then(async (r) => ({
        status: r.status,
        reason: ((await r.json()) as { reason?: string }).reason,
      }));
    expect((await viaSession()).status).toBe(200);
    expect((await call(h, 'GET', '/api/v1/proposals', { token: op.token })).status).toBe(200);

    expect((await patch(op.id, { active: false })).status).toBe(200);

    const page = await browser.get('/');
    expect([page.status, page.response.headers.get('location')]).toEqual([303, '/login?next=%2F']);
    expect(await viaSession()).toEqual({ status: 401, reason: 'unauthenticated' });
    const byToken = await call(h, 'GET', '/api/v1/proposals', { token: op.token });
    expect([byToken.status, byToken.body['reason']]).toEqual([401, 'unauthenticated']);
    // Enabled again, the token works again (it was never revoked); the session ended for good.
    expect((await patch(op.id, { active: true })).status).toBe(200);
    expect((await call(h, 'GET', '/api/v1/proposals', { token: op.token })).status).toBe(200);
    expect((await browser.get('/')).status).toBe(303);
  });

  it('a demoted approver cannot approve on the next request, by session or token: 403 forbidden, nothing paid', async () => {
    const op = await newOperator('acme', ['approver']);
    const browser = await consoleAs(op.email);
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme', 31_500) },
    });
    const review = await browser.get(`/proposals/${p.id}`);
    expect(review.status).toBe(200);
    const digest = hidden(review.html, 'digest');
    const csrf = hidden(review.html, 'csrf');

    expect((await patch(op.id, { roles: ['viewer'] })).status).toBe(200);

    const posted = await browser.post(`/proposals/${p.id}/approve`, { digest, csrf });
    expect([posted.status, reasonOf(posted.html)]).toEqual([403, 'forbidden']);
    const byToken = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token: op.token,
      body: { seenDigest: p.digest },
    });
    expect([byToken.status, byToken.body['reason']]).toEqual([403, 'forbidden']);
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
  });

  it('disabling an approver withdraws their "1 of 2" at once; the second approval then waits for a third, nothing paid', async () => {
    const first = await newOperator('acme', ['approver']);
    const second = await newOperator('acme', ['approver']);
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme', 1_250_000) },
    });
    const approve = (token: string) =>
      call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, { token, body: { seenDigest: p.digest } });
    expect((await approve(first.token)).status).toBe(202);
    expect((await patch(first.id, { active: false })).status).toBe(200);
    const shown = await call(h, 'GET', `/api/v1/proposals/${p.id}`, { token: adminToken() });
    expect(shown.body['approvals']).toMatchObject({ required: 2, given: [] });
    const withdrawn = (await h.engine.audit.events('acme', p.id)).filter(
      (e) => e.step === 'approval_withdrawn',
    );
    expect(withdrawn.map((e) => [e.reason, e.detail['approver']])).toEqual([
      ['approver_inactive', `user:${first.email}`],
    ]);
    const byTheSecond = await approve(second.token);
    expect(byTheSecond.status).toBe(202);
    expect(byTheSecond.body['approvals']).toMatchObject({
      required: 2,
      given: [{ by: `user:${second.email}` }],
    });
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
  });
});

describe('the operators console page', () => {
  it('admins get it in the navigation; others are refused with forbidden', async () => {
    const admin = await consoleAs((await newOperator('acme', ['admin'])).email);
    const inbox = await admin.get('/');
    expect(inbox.html).toContain('href="/operators"');
    const page = await admin.get('/operators');
    expect(page.status).toBe(200);
    expect(page.html).toContain('approver@acme.test');
    expect(page.html).not.toContain('@globex.test');

    const approver = await consoleAs((await newOperator('acme', ['approver'])).email);
    expect((await approver.get('/')).html).not.toContain('href="/operators"');
    const refused = await approver.get('/operators');
    expect([refused.status, reasonOf(refused.html)]).toEqual([403, 'forbidden']);
    const anonymous = await new ConsoleClient(h.url).get('/operators');
    expect([anonymous.status, anonymous.response.headers.get('location')]).toEqual([
      303,
      '/login?next=%2Foperators',
    ]);
  });

  it('the routing page has the same door: admins in, others forbidden, the signed-out to sign-in', async () => {
    const admin = await consoleAs((await newOperator('acme', ['admin'])).email);
    expect((await admin.get('/routing')).status).toBe(200);
    const approver = await consoleAs((await newOperator('acme', ['approver'])).email);
    const refused = await approver.get('/routing');
    expect([refused.status, reasonOf(refused.html)]).toEqual([403, 'forbidden']);
    const anonymous = await new ConsoleClient(h.url).get('/routing');
    expect([anonymous.status, anonymous.response.headers.get('location')]).toEqual([
      303,
      '/login?next=%2Frouting',
    ]);
  });

  it('disables, enables and sets roles through CSRF-checked forms, audited as the admin', async () => {
    const adminOp = await newOperator('acme', ['admin']);
    const admin = await consoleAs(adminOp.email);
    const op = await newOperator('acme', ['viewer']);
    const csrf = hidden((await admin.get('/operators')).html, 'csrf');

    const forged = await admin.post(`/operators/${op.id}/active`, { active: 'no', csrf: 'x'.repeat(64) });
    expect([forged.status, reasonOf(forged.html)]).toEqual([403, 'cross_site_request']);
    const crossSite = await admin.post(
      `/operators/${op.id}/active`,
      { active: 'no', csrf },
      { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    );
    expect([crossSite.status, reasonOf(crossSite.html)]).toEqual([403, 'cross_site_request']);
    const extra = await admin.post(`/operators/${op.id}/active`, { active: 'no', csrf, roles: 'admin' });
    expect([extra.status, reasonOf(extra.html)]).toEqual([400, 'invalid_form']);
    expect((await h.directory.operatorAccounts('acme')).find((o) => o.id === op.id)?.active).toBe(true);

    const disabled = await admin.post(`/operators/${op.id}/active`, { active: 'no', csrf });
    expect([disabled.status, disabled.location]).toEqual([303, '/operators']);
    const shown = await admin.get('/operators');
    expect(shown.html).toContain('Saved.');
    expect(shown.html).toContain(`aria-label="Enable ${op.email}"`);
    const roles = await admin.post(`/operators/${op.id}/roles`, {
      'role.approver': 'yes',
      'role.viewer': 'yes',
      csrf,
    });
    expect(roles.status).toBe(303);
    expect((await h.directory.operatorAccounts('acme')).find((o) => o.id === op.id)).toMatchObject({
      active: false,
      roles: ['approver', 'viewer'],
    });
    const none = await admin.post(`/operators/${op.id}/roles`, { csrf });
    expect([none.status, reasonOf(none.html)]).toEqual([422, 'invalid_request']);
    const foreign = await newOperator('globex', ['viewer']);
    const across = await admin.post(`/operators/${foreign.id}/active`, { active: 'no', csrf });
    expect([across.status, reasonOf(across.html)]).toEqual([404, 'not_found']);

    const events = await auditOf('acme', op.id);
    expect(events.map((e) => [e.actor, Object.keys(e.detail)])).toEqual([
      [`user:${adminOp.email}`, ['operator', 'active']],
      [`user:${adminOp.email}`, ['operator', 'roles']],
    ]);
  });

  it('shows last_admin on the page when an admin would remove the last active admin', async () => {
    // A tenant of its own, so other tests' admins do not count.
    await h.directory.ensureTenant('initech');
    await h.directory.addOperator({
      tenant: 'initech',
      email: 'boss@initech.test',
      password: PASSWORD,
      roles: ['admin'],
    });
    const boss = await consoleAs('boss@initech.test');
    const page = await boss.get('/operators');
    const csrf = hidden(page.html, 'csrf');
    const id = (await h.directory.operatorAccounts('initech'))[0]!.id;
    const refused = await boss.post(`/operators/${id}/active`, { active: 'no', csrf });
    expect([refused.status, reasonOf(refused.html)]).toEqual([409, 'last_admin']);
    expect(refused.html).toContain('without an active admin');
    expect((await boss.get('/operators')).status).toBe(200);
  });
});
