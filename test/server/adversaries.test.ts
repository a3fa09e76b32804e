import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqliteStore } from '../../src/store/sqlite/index.js';
import { forgeNextAuditEvent } from '../support/forge-audit.js';
import { ConsoleClient } from './support/console-client.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

// One pass over real HTTP as each adversary of SECURITY.md: every attempt gets a named refusal,
// never a 5xx, and none of them buries or rewrites the decision a human makes afterwards.

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness();
});
afterAll(async () => {
  await h.close();
});

const pay = (invoice: string, extra: Record<string, unknown> = {}) => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  runId: 'run-adversary',
  ...extra,
});

async function signedIn(role: 'approver' | 'viewer' | 'admin', tenant: 'acme' | 'globex' = 'acme') {
  const client = new ConsoleClient(h.url);
  const op = h.tenants[tenant].operators[role];
  expect((await client.login(op.email, op.password)).status).toBe(303);
  return client;
}

describe('the agent writes every field it can reach', () => {
  it('server-owned facts, labels and executable values in the body are refused by name', async () => {
    const token = h.tenants.acme.agentToken;
    const invoice = freshInvoice(h.world, 'acme');
    const attempts: [Record<string, unknown>, number, string][] = [
      [pay(invoice, { tenant: 'globex' }), 422, 'invalid_request'],
      [pay(invoice, { requestedBy: 'user:ada@acme.test' }), 422, 'invalid_request'],
      [pay(invoice, { resource: 'invoice:inv-other' }), 409, 'resource_mismatch'],
      [{ ...pay(invoice), request: { invoice_id: invoice, amount_minor: 1 } }, 422, 'invalid_request'],
      [{ ...pay(invoice), runId: null }, 400, 'run_id_missing'],
      [{ ...pay(invoice), operation: 'invoice.pay_everything' }, 422, 'invalid_request'],
    ];
    for (const [body, status, reason] of attempts) {
      const r = await call(h, 'POST', '/api/v1/proposals', { token, body });
      expect([JSON.stringify(body), r.status, r.body['reason']]).toEqual([
        JSON.stringify(body),
        status,
        reason,
      ]);
    }
    const proto = await call(h, 'POST', '/api/v1/proposals', {
      token,
      rawBody: `{"operation":"invoice.pay","request":{"invoice_id":"${invoice}","__proto__":{"amount_minor":1}},"runId":"r"}`,
    });
    expect([proto.status, proto.body['reason']]).toEqual([400, 'invalid_json']);
    expect(
      (await h.engine.proposals.list('acme', { status: 'pending' })).items.some(
        (p) => p.resource === `invoice:${invoice}`,
      ),
    ).toBe(false);
  });

  it('a section label is bound into the digest: the approver asserts it, and a page of another section is refused', async () => {
    const p = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme'), { section: 'treasury' }));
    expect(p['section']).toBe('treasury');
    const approve = (body: Record<string, unknown>) =>
      call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        body: { seenDigest: p.digest, ...body },
      });
    expect((await approve({ expectedSection: 'payables' })).body['reason']).toBe('section_mismatch');
    expect((await approve({ expectedSection: 'treasury' })).status).toBe(200);
  });

  it('approving, deciding or reading what it may not gets forbidden or not_found, never more', async () => {
    const p = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const token = h.tenants.acme.agentToken;
    const own = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token,
      body: { seenDigest: p.digest },
    });
    expect([own.status, own.body['reason']]).toEqual([403, 'forbidden']);
    const grant = await call(h, 'POST', '/api/v1/grants', {
      token,
      body: {
        subject: 'agent:acme-assistant',
        operations: ['invoice.pay'],
        resource: 'invoice:*',
        constraints: {},
        cap: { uses: 1 },
        expiresAt: new Date(h.clock.now() + 60_000).toISOString(),
      },
    });
    expect(grant.status).toBe(403);
    const foreign = await call(h, 'GET', `/api/v1/proposals/${p.id}`, { token: h.tenants.globex.agentToken });
    expect([foreign.status, foreign.body['reason']]).toEqual([404, 'not_found']);
  });
});

describe('a viewer and another tenant', () => {
  it('a viewer cannot decide through the console or the API, with a real or a forged digest', async () => {
    const p = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const viewer = await signedIn('viewer');
    const csrf = await viewer.csrf();
    const forged = await viewer.post(`/proposals/${p.id}/approve`, { digest: p.short, csrf });
    expect(forged.status).toBe(422);
    expect(forged.html).toContain('invalid_digest');
    const real = await viewer.post(`/proposals/${p.id}/approve`, { digest: p.digest, csrf });
    expect(real.status).toBe(403);
    expect(real.html).toContain('forbidden');
    const api = await call(h, 'POST', `/api/v1/proposals/${p.id}/decline`, {
      token: h.tenants.acme.operators.viewer.token,
      body: {},
    });
    expect([api.status, api.body['reason']]).toEqual([403, 'forbidden']);
    expect((await h.engine.proposals.get('acme', p.id))?.status).toBe('pending');
  });

  it("another tenant's operator gets not_found for the proposal, its audit and its decisions", async () => {
    const p = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const token = h.tenants.globex.operators.admin.token;
    for (const [method, path, body] of [
      ['GET', `/api/v1/proposals/${p.id}`, undefined],
      ['GET', `/api/v1/proposals/${p.id}/audit`, undefined],
      ['POST', `/api/v1/proposals/${p.id}/approve`, { seenDigest: p.digest }],
      ['POST', `/api/v1/proposals/${p.id}/edit`, { changes: {} }],
    ] as const) {
      const r = await call(h, method, path, { token, ...(body ? { body } : {}) });
      expect([path, r.status, r.body['reason']]).toEqual([path, 404, 'not_found']);
    }
    const page = await (await signedIn('approver', 'globex')).get(`/proposals/${p.id}`);
    expect(page.status).toBe(404);
  });
});

describe('a flood', () => {
  it('refusals and quota refusals never bury the decision that follows; bad paging is 422, never 500', async () => {
    const agentToken = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'flooder' });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i++) {
      const r = await call(h, 'POST', '/api/v1/proposals', {
        token: agentToken,
        body: pay(freshInvoice(h.world, 'acme')),
      });
      statuses.push(r.status);
      if (r.status === 429) {
        expect(r.body['reason']).toBe('rate_limited');
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      }
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(30);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);

    const [target] = (await h.engine.proposals.list('acme', { status: 'pending', limit: 1 })).items;
    for (let i = 0; i < 60; i++) {
      const r = await call(h, 'POST', `/api/v1/proposals/${target!.id}/approve`, {
        token: agentToken,
        body: { seenDigest: target!.digest },
      });
      expect(r.status).toBeLessThan(500);
    }
    const decided = await call(h, 'POST', `/api/v1/proposals/${target!.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: target!.digest },
    });
    expect(decided.status).toBe(200);
    const decisions = await call(
      h,
      'GET',
      `/api/v1/proposals/${target!.id}/audit?exceptStep=denied&limit=10`,
      {
        token: h.tenants.acme.operators.viewer.token,
      },
    );
    const steps = (decisions.body['events'] as { step: string }[]).map((e) => e.step);
    expect(steps).toEqual(expect.arrayContaining(['proposed', 'approved', 'claimed', 'outcome']));
    for (const query of ['limit=0', 'limit=abc', 'cursor=not-a-cursor', 'step=exploded', 'surprise=1']) {
      const r = await call(h, 'GET', `/api/v1/proposals/${target!.id}/audit?${query}`, {
        token: h.tenants.acme.operators.viewer.token,
      });
      expect([query, r.status, r.body['reason']]).toEqual([query, 422, 'invalid_request']);
    }
  });
});

describe('someone who can write the database blocks a tenant’s audit chain', () => {
  it('over HTTP every decision and proposal of that tenant is a named 409 corrupt_audit_chain, never a 5xx; reads still answer and another tenant goes on', async () => {
    const s = await serverHarness();
    try {
      const p = await proposeViaApi(s, 'acme', pay(freshInvoice(s.world, 'acme')));
      await s.store.read((tx) => tx.auditHead('acme'));
      forgeNextAuditEvent(s.store as SqliteStore, 'acme');
      const proposed = await call(s, 'POST', '/api/v1/proposals', {
        token: s.tenants.acme.agentToken,
        body: pay(freshInvoice(s.world, 'acme')),
      });
      expect([proposed.status, proposed.body['reason']]).toEqual([409, 'corrupt_audit_chain']);
      expect(String(proposed.body['modelMessage'])).toContain('Nothing was recorded or executed');
      const approved = await call(s, 'POST', `/api/v1/proposals/${p.id}/approve`, {
        token: s.tenants.acme.operators.approver.token,
        body: { seenDigest: p.digest },
      });
      expect([approved.status, approved.body['reason']]).toEqual([409, 'corrupt_audit_chain']);
      const client = new ConsoleClient(s.url);
      const approver = s.tenants.acme.operators.approver;
      expect((await client.login(approver.email, approver.password)).status).toBe(303);
      const page = await client.post(`/proposals/${p.id}/approve`, {
        digest: p.digest,
        csrf: await client.csrf(),
      });
      expect(page.status).toBe(409);
      expect(page.html).toContain('corrupt_audit_chain');
      // Reads record nothing: the viewer still sees the proposal, pending, and its audit.
      const viewer = s.tenants.acme.operators.viewer.token;
      const read = await call(s, 'GET', `/api/v1/proposals/${p.id}`, { token: viewer });
      expect([read.status, read.body['status']]).toEqual([200, 'pending']);
      expect((await call(s, 'GET', `/api/v1/proposals/${p.id}/audit`, { token: viewer })).status).toBe(200);
      expect(s.world.provider.calls).toBe(0);
      // Another tenant's chain is its own.
      const globex = await call(s, 'POST', '/api/v1/proposals', {
        token: s.tenants.globex.agentToken,
        body: pay(freshInvoice(s.world, 'globex')),
      });
      expect(globex.status).toBe(201);
    } finally {
      await s.close();
    }
  });
});
