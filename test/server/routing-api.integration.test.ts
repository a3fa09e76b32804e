import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

const admin = () => h.tenants.acme.operators.admin.token;
const approverToken = () => h.tenants.acme.operators.approver.token;

describe('routing through the API: /api/v1/routes and /api/v1/groups', () => {
  it('admins manage groups and routes; the routed group alone decides, others are refused forbidden naming the route', async () => {
    const group = await call(h, 'PUT', '/api/v1/groups/finance', {
      token: admin(),
      body: { members: ['user:admin@acme.test'] },
    });
    expect(group.status).toBe(200);
    expect(group.body).toMatchObject({ name: 'finance', members: ['user:admin@acme.test'] });
    const created = await call(h, 'POST', '/api/v1/routes', {
      token: admin(),
      body: {
        name: 'payments over 1,000.00',
        operation: 'invoice.pay',
        amount: { field: 'amount_minor', above: 100_000 },
        group: 'finance',
        channel: '#finance-approvals',
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ group: 'finance', channel: '#finance-approvals', escalation: null });
    const routeId = created.body['id'] as string;
    expect((await call(h, 'GET', '/api/v1/routes', { token: admin() })).body['items']).toHaveLength(1);

    const invoice = freshInvoice(h.world, 'acme', 500_000);
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      resource: `invoice:${invoice}`,
    });
    expect(p['route']).toMatchObject({ id: routeId, group: 'finance', channel: '#finance-approvals' });
    // "Needs you": the approver outside the group no longer sees it; the admin in it does.
    const theirs = await call(h, 'GET', '/api/v1/proposals?needs=me', { token: approverToken() });
    expect((theirs.body['items'] as { id: string }[]).map((i) => i.id)).not.toContain(p.id);
    const mine = await call(h, 'GET', '/api/v1/proposals?needs=me', { token: admin() });
    expect((mine.body['items'] as { id: string }[]).map((i) => i.id)).toContain(p.id);
    const refused = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token: approverToken(),
      body: { seenDigest: p.digest },
    });
    expect(refused.status).toBe(403);
    expect(refused.body['reason']).toBe('forbidden');
    expect(refused.body['message']).toContain('route payments over 1,000.00');
    const approved = await call(h, 'POST', `/api/v1/proposals/${p.id}/approve`, {
      token: admin(),
      body: { seenDigest: p.digest },
    });
    expect(approved.status).toBe(200);

    // The changes are in the audit: the route's and the group's.
    const events = await h.engine.audit.events('acme', routeId);
    expect(events.map((e) => [e.step, e.actor])).toEqual([['route_changed', 'user:admin@acme.test']]);
    expect((await h.engine.audit.events('acme', 'grp_finance')).map((e) => e.step)).toEqual([
      'group_changed',
    ]);
  });

  it('only admins, and only their own tenant', async () => {
    for (const token of [approverToken(), h.tenants.acme.operators.viewer.token, h.tenants.acme.agentToken]) {
      const r = await call(h, 'GET', '/api/v1/routes', { token });
      expect(r.status).toBe(403);
      expect(r.body['reason']).toBe('forbidden');
    }
    const put = await call(h, 'PUT', '/api/v1/groups/ops', {
      token: approverToken(),
      body: { members: ['user:approver@acme.test'] },
    });
    expect(put.body['reason']).toBe('forbidden');
    const globexAdmin = h.tenants.globex.operators.admin.token;
    expect((await call(h, 'GET', '/api/v1/routes', { token: globexAdmin })).body['items']).toEqual([]);
    expect((await call(h, 'GET', '/api/v1/groups', { token: globexAdmin })).body['items']).toEqual([]);
    const acmeRoute = (
      (await call(h, 'GET', '/api/v1/routes', { token: admin() })).body['items'] as {
        id: string;
      }[]
    )[0]!;
    const theirs = await call(h, 'DELETE', `/api/v1/routes/${acmeRoute.id}`, { token: globexAdmin });
    expect(theirs.status).toBe(404);
    expect(theirs.body['reason']).toBe('not_found');
  });

  it('refuses a route naming an unknown group or operation, and a group in use', async () => {
    const unknownGroup = await call(h, 'POST', '/api/v1/routes', {
      token: admin(),
      body: { name: 'x', operation: 'invoice.pay', group: 'nobody' },
    });
    expect(unknownGroup.status).toBe(422);
    expect(unknownGroup.body['reason']).toBe('invalid_request');
    const unknownOperation = await call(h, 'POST', '/api/v1/routes', {
      token: admin(),
      body: { name: 'x', operation: 'invoice.steal', group: 'finance' },
    });
    expect(unknownOperation.body['reason']).toBe('invalid_request');
    const inUse = await call(h, 'DELETE', '/api/v1/groups/finance', { token: admin() });
    expect(inUse.status).toBe(422);
    expect(inUse.body['reason']).toBe('invalid_request');
  });
});
