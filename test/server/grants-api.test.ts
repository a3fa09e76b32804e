import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshInvoice, type ServerHarness, serverHarness } from './support/server-harness.js';

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness();
});
afterAll(async () => {
  await h.close();
});

const policy = () => ({
  subject: 'agent:acme-assistant',
  operations: ['invoice.pay'],
  resource: 'invoice:*',
  constraints: { amount_minor: { max: 10_000 }, currency: { equals: 'USD' } },
  cap: { field: 'amount_minor', total: 30_000 },
  expiresAt: new Date(h.clock.now() + 3_600_000).toISOString(),
});

describe('grants over HTTP', () => {
  it('only an admin creates or revokes; approvers and viewers list with usage; agents cannot touch them', async () => {
    const acme = h.tenants.acme;
    const asApprover = await call(h, 'POST', '/api/v1/grants', {
      token: acme.operators.approver.token,
      body: policy(),
    });
    expect(asApprover.status).toBe(403);
    expect((asApprover.body as { reason: string }).reason).toBe('forbidden');
    const asAgent = await call(h, 'GET', '/api/v1/grants', { token: acme.agentToken });
    expect(asAgent.status).toBe(403);
    expect((asAgent.body as { reason: string }).reason).toBe('forbidden');

    const created = await call(h, 'POST', '/api/v1/grants', {
      token: acme.operators.admin.token,
      body: policy(),
    });
    expect(created.status).toBe(201);
    const grant = created.body as { id: string; state: string; usage: { uses: number; total: number } };
    expect(grant.id).toMatch(/^grt_/);
    expect(grant).toMatchObject({ state: 'live', usage: { uses: 0, total: 0 } });

    // A proposal inside the grant is approved by it and executes; the 201 says so.
    const invoice = freshInvoice(h.world, 'acme', 9_999);
    const proposed = await call(h, 'POST', '/api/v1/proposals', {
      token: acme.agentToken,
      body: {
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        resource: `invoice:${invoice}`,
        runId: 'run-g',
      },
    });
    expect(proposed.status).toBe(201);
    expect(proposed.body).toMatchObject({
      status: 'succeeded',
      grant: { kind: 'approved_by_grant', grantId: grant.id, outcome: { kind: 'succeeded' } },
    });

    // One outside it waits for a human, with the failing constraint named.
    const big = freshInvoice(h.world, 'acme', 24_049);
    const waiting = await call(h, 'POST', '/api/v1/proposals', {
      token: acme.agentToken,
      body: {
        operation: 'invoice.pay',
        request: { invoice_id: big },
        resource: `invoice:${big}`,
        runId: 'run-g',
      },
    });
    expect(waiting.body).toMatchObject({
      status: 'pending',
      grant: { kind: 'refused', reason: 'outside_grant', detail: '$.amount_minor: 24049 > max 10000' },
    });

    const listed = await call(h, 'GET', '/api/v1/grants', { token: acme.operators.viewer.token });
    expect(listed.status).toBe(200);
    expect((listed.body as { items: unknown[] }).items).toEqual([
      expect.objectContaining({ id: grant.id, usage: { uses: 1, total: 9_999 } }),
    ]);

    const foreign = await call(h, 'GET', `/api/v1/grants/${grant.id}`, {
      token: h.tenants.globex.operators.admin.token,
    });
    expect(foreign.status).toBe(404);
    expect(
      (
        await call(h, 'POST', `/api/v1/grants/${grant.id}/revoke`, {
          token: h.tenants.globex.operators.admin.token,
          body: {},
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await call(h, 'POST', `/api/v1/grants/${grant.id}/revoke`, {
          token: acme.operators.approver.token,
          body: {},
        })
      ).status,
    ).toBe(403);

    const revoked = await call(h, 'POST', `/api/v1/grants/${grant.id}/revoke`, {
      token: acme.operators.admin.token,
      body: {},
    });
    expect(revoked.status).toBe(200);
    const again = await call(h, 'POST', `/api/v1/grants/${grant.id}/revoke`, {
      token: acme.operators.admin.token,
      body: {},
    });
    expect(again.status).toBe(409);
    expect((again.body as { reason: string }).reason).toBe('grant_revoked');
  });

  it('no grant stands in for a two-approver payment: satisfiesQuorum true is 422 naming the field', async () => {
    const acme = h.tenants.acme;
    const body = {
      subject: 'agent:acme-assistant',
      operations: ['invoice.pay'],
      resource: 'invoice:*',
      constraints: { currency: { equals: 'USD' } },
      expiresAt: new Date(h.clock.now() + 3_600_000).toISOString(),
    };
    const asked = await call(h, 'POST', '/api/v1/grants', {
      token: acme.operators.admin.token,
      body: { ...body, satisfiesQuorum: true },
    });
    expect(asked.status).toBe(422);
    expect(asked.body).toMatchObject({
      reason: 'invalid_request',
      issues: [{ path: '$.satisfiesQuorum' }],
    });
    const plain = await call(h, 'POST', '/api/v1/grants', {
      token: acme.operators.admin.token,
      body: { ...body, satisfiesQuorum: false },
    });
    expect(plain.status).toBe(201);
    expect(plain.body).not.toHaveProperty('satisfiesQuorum');
    const invoice = freshInvoice(h.world, 'acme', 1_250_000);
    const waiting = await call(h, 'POST', '/api/v1/proposals', {
      token: acme.agentToken,
      body: { operation: 'invoice.pay', request: { invoice_id: invoice }, runId: 'run-q' },
    });
    expect(waiting.body).toMatchObject({
      status: 'pending',
      approvals: { required: 2, given: [] },
      grant: { kind: 'refused', reason: 'outside_grant' },
    });
    expect((waiting.body as { grant: { detail: string } }).grant.detail).toContain('needs 2 approvals');
    await call(h, 'POST', `/api/v1/grants/${(plain.body as { id: string }).id}/revoke`, {
      token: acme.operators.admin.token,
      body: {},
    });
  });

  it('an invalid grant is 422 naming every field', async () => {
    const r = await call(h, 'POST', '/api/v1/grants', {
      token: h.tenants.acme.operators.admin.token,
      body: { ...policy(), constraints: { colour: { equals: 'red' } }, resource: '*', extra: 1 },
    });
    expect(r.status).toBe(422);
    expect((r.body as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual(['$.extra']);
    const r2 = await call(h, 'POST', '/api/v1/grants', {
      token: h.tenants.acme.operators.admin.token,
      body: { ...policy(), constraints: { colour: { equals: 'red' } }, resource: '*' },
    });
    expect(r2.status).toBe(422);
    expect((r2.body as { issues: { path: string }[] }).issues.map((i) => i.path).sort()).toEqual([
      '$.constraints.colour',
      '$.resource',
    ]);
  });

  // Keys named like Object.prototype members once reached `shape[field]` and answered 500.
  it.each(['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'])(
    'a bound on "%s" is 422 naming it as not a scope field, never 500',
    async (name) => {
      const admin = h.tenants.acme.operators.admin.token;
      // Written as text: an object literal's `__proto__` would set the prototype, not a key.
      const { constraints: _bounds, cap: _cap, ...rest } = policy();
      const r = await call(h, 'POST', '/api/v1/grants', {
        token: admin,
        rawBody: `{"constraints":{"${name}":{"max":5}},${JSON.stringify(rest).slice(1)}`,
      });
      if (name === '__proto__') {
        // The API refuses that key anywhere in a body, before the engine sees it.
        expect(r.status).toBe(400);
        expect(r.body['reason']).toBe('invalid_json');
        expect(r.body).toMatchObject({
          jsonError: 'proto_key',
          message: '$.constraints.__proto__: the key "__proto__" is not accepted',
        });
      } else {
        expect(r.status).toBe(422);
        expect(r.body['reason']).toBe('invalid_request');
        expect(r.body['issues']).toEqual([
          { path: `$.constraints.${name}`, message: 'not a scope field of invoice.pay' },
        ]);
      }

      const capped = await call(h, 'POST', '/api/v1/grants', {
        token: admin,
        body: { ...policy(), cap: { field: name, total: 100 } },
      });
      expect(capped.status).toBe(422);
      expect(capped.body['reason']).toBe('invalid_request');
      expect(capped.body['issues']).toEqual([
        { path: '$.cap.field', message: `${name} is not a numeric scope field of invoice.pay` },
      ]);
    },
  );
});

describe('GET /grants/:id', () => {
  it("finds a grant however many newer ones the tenant has, and not another tenant's", async () => {
    const globex = h.tenants.globex;
    const created = await call(h, 'POST', '/api/v1/grants', {
      token: globex.operators.admin.token,
      body: { ...policy(), subject: 'agent:old' },
    });
    expect(created.status).toBe(201);
    const oldest = (created.body as { id: string }).id;
    const admin = { id: 'user:bulk-admin', tenant: 'globex', kind: 'operator', roles: ['admin'] } as const;
    // Before: the route searched the newest 500 grants and answered an older one not_found.
    for (let i = 0; i < 501; i++) {
      h.clock.advance(1);
      const made = await h.engine.grants.create({
        ...policy(),
        expiresAt: h.clock.now() + 3_600_000,
        subject: `agent:bulk-${i}`,
        tenant: 'globex',
        grantedBy: admin,
      });
      expect(made.kind).toBe('granted');
    }
    const found = await call(h, 'GET', `/api/v1/grants/${oldest}`, { token: globex.operators.viewer.token });
    expect(found.status).toBe(200);
    expect(found.body).toMatchObject({ id: oldest, subject: 'agent:old', state: 'live' });
    const foreign = await call(h, 'GET', `/api/v1/grants/${oldest}`, {
      token: h.tenants.acme.operators.admin.token,
    });
    expect(foreign.status).toBe(404);
    expect((foreign.body as { reason: string }).reason).toBe('not_found');
  });
});

describe('GET /metrics', () => {
  it('serves Prometheus text to the metrics token only', async () => {
    const m = await serverHarness({ metricsToken: 'scrape-token-0123456789abcdef' });
    try {
      const invoice = freshInvoice(m.world, 'acme');
      await call(m, 'POST', '/api/v1/proposals', {
        token: m.tenants.acme.agentToken,
        body: {
          operation: 'invoice.pay',
          request: { invoice_id: invoice },
          resource: `invoice:${invoice}`,
          runId: 'run-m',
        },
      });
      const bare = await call(m, 'GET', '/metrics');
      expect([bare.status, bare.body['reason'], bare.headers.get('content-type')]).toEqual([
        401,
        'unauthenticated',
        'application/problem+json',
      ]);
      expect(bare.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect((await call(m, 'GET', '/metrics', { token: m.tenants.acme.operators.admin.token })).status).toBe(
        401,
      );
      const ok = await fetch(`${m.url}/metrics`, {
        headers: { authorization: 'Bearer scrape-token-0123456789abcdef' },
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toContain('text/plain');
      expect(await ok.text()).toContain('countersign_proposals_total{operation="invoice.pay"} 1');
    } finally {
      await m.close();
    }
    expect((await call(h, 'GET', '/metrics')).status).not.toBe(200);
  });
});
