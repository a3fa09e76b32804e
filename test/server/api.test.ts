import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation } from '../../src/index.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type ServerHarness,
  serverHarness,
} from './support/server-harness.js';

// An operation whose preparation crashes: a bug in application code must be a 500 with a
// correlation id, logged, and never a stack trace to the client.
const crashing = defineOperation({
  kind: 'test.crash',
  scopeVersion: 1,
  scope: z.strictObject({ tenant: z.string(), operation: z.literal('test.crash'), n: z.number() }),
  request: z.strictObject({ n: z.number() }),
  arguments: z.strictObject({ n: z.number() }),
  prepare: async () => {
    throw new Error('secret database password in a stack');
  },
});

let h: ServerHarness;
beforeAll(async () => {
  h = await serverHarness({ extraOperations: [crashing] });
});
afterAll(async () => {
  await h.close();
});

const pay = (invoice: string, runId = 'run-api-1') => ({
  operation: 'invoice.pay',
  request: { invoice_id: invoice },
  resource: `invoice:${invoice}`,
  runId,
});

describe('POST /api/v1/proposals', () => {
  it('freezes a proposal for the agent and answers 201 with id, status, digest, short, preview, expiresAt and approvalUrl', async () => {
    const invoice = freshInvoice(h.world, 'acme');
    const r = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: pay(invoice),
    });
    expect(r.status).toBe(201);
    const body = r.body as Record<string, unknown>;
    expect(body['id']).toMatch(/^prp_/);
    expect(body['status']).toBe('pending');
    expect(body['digest']).toMatch(/^[0-9a-f]{64}$/);
    expect(body['short']).toBe((body['digest'] as string).slice(0, 12));
    expect(body['preview']).toMatchObject({
      amount: { minor: 24049, currency: 'USD', display: '240.49 USD' },
    });
    expect(body['requestedBy']).toBe('agent:acme-assistant');
    expect(body['runId']).toBe('run-api-1');
    expect(Date.parse(body['expiresAt'] as string)).toBe(h.clock.now() + 30 * 60_000);
    expect(body['approvalUrl']).toBe(`${h.url}/proposals/${body['id']}?run=run-api-1`);
    expect(body['handback']).toBe('Waiting for a human decision.');
    expect(body).not.toHaveProperty('arguments');
  });

  it('refuses an unknown request field with 422 invalid_request, issues and a modelMessage', async () => {
    const r = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: { ...pay('inv-104'), request: { invoice_id: 'inv-104', amount_minor: 1 } },
    });
    expect(r.status).toBe(422);
    expect(r.body['reason']).toBe('invalid_request');
    expect(r.body['issues']).toEqual([{ path: '$.amount_minor', message: 'unknown field' }]);
    expect(r.body['modelMessage']).toContain('$.amount_minor: unknown field');
  });

  it('refuses a body field the API does not know (tenant from the body) with 422 invalid_request', async () => {
    const r = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: { ...pay('inv-104'), tenant: 'globex' },
    });
    expect(r.status).toBe(422);
    expect(r.body['reason']).toBe('invalid_request');
    expect(r.body['issues']).toEqual([{ path: '$.tenant', message: 'unknown field' }]);
  });

  it('fails closed without a run id: 400 run_id_missing', async () => {
    const { runId: _, ...withoutRun } = pay('inv-104');
    const r = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: withoutRun,
    });
    expect(r.status).toBe(400);
    expect(r.body['reason']).toBe('run_id_missing');
    const blank = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: { ...pay('inv-104'), runId: '  ' },
    });
    expect(blank.status).toBe(400);
    expect(blank.body['reason']).toBe('run_id_missing');
    for (const runId of ['undefined', 'null', '', ' Null ']) {
      const placeholder = await call(h, 'POST', '/api/v1/proposals', {
        token: h.tenants.acme.agentToken,
        body: { ...pay('inv-104'), runId },
      });
      expect(placeholder.status).toBe(400);
      expect(placeholder.body['reason']).toBe('run_id_missing');
    }
  });

  it('answers a crashing operation with 500 internal_error and a correlation id, logs it, and shows no stack', async () => {
    const r = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: { operation: 'test.crash', request: { n: 1 }, resource: 'x:1', runId: 'run-crash' },
    });
    expect(r.status).toBe(500);
    expect(Object.keys(r.body).sort()).toEqual([
      'correlationId',
      'detail',
      'message',
      'reason',
      'status',
      'title',
      'type',
    ]);
    expect(r.body['reason']).toBe('internal_error');
    expect(r.body['correlationId']).toMatch(/^cor_/);
    expect(JSON.stringify(r.body)).not.toContain('secret');
    const logged = h.logs.find(
      (l) =>
        l.level === 'error' &&
        (l.fields as { correlationId?: string }).correlationId === r.body['correlationId'],
    );
    expect(logged?.message).toBe('unexpected error');
  });
});

describe('reading proposals', () => {
  it('GET /api/v1/proposals/:id returns status, preview, short hash, outcome and handback', async () => {
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const r = await call(h, 'GET', `/api/v1/proposals/${proposed.id}`, {
      token: h.tenants.acme.operators.viewer.token,
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      id: proposed.id,
      status: 'pending',
      short: proposed.short,
      outcome: null,
      handback: 'Waiting for a human decision.',
    });
  });

  it('lists the tenant’s pending proposals, paginated by cursor, never another tenant’s', async () => {
    const run = `run-list-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme'), run))).id);
      h.clock.advance(1);
    }
    await proposeViaApi(h, 'globex', pay(freshInvoice(h.world, 'globex'), run));
    const first = await call(h, 'GET', `/api/v1/proposals?status=pending&runId=${run}&limit=2`, {
      token: h.tenants.acme.operators.approver.token,
    });
    expect(first.status).toBe(200);
    const firstItems = first.body['items'] as { id: string }[];
    expect(firstItems.map((p) => p.id)).toEqual([ids[2], ids[1]]);
    expect(typeof first.body['nextCursor']).toBe('string');
    const second = await call(
      h,
      'GET',
      `/api/v1/proposals?status=pending&runId=${run}&limit=2&cursor=${first.body['nextCursor']}`,
      {
        token: h.tenants.acme.operators.approver.token,
      },
    );
    expect((second.body['items'] as { id: string }[]).map((p) => p.id)).toEqual([ids[0]]);
    expect(second.body).not.toHaveProperty('nextCursor');
  });

  it('refuses an unknown status or query parameter with 422 invalid_request', async () => {
    const bad = await call(h, 'GET', '/api/v1/proposals?status=approvedish', {
      token: h.tenants.acme.operators.approver.token,
    });
    expect(bad.status).toBe(422);
    expect(bad.body['reason']).toBe('invalid_request');
    const unknown = await call(h, 'GET', '/api/v1/proposals?tenant=globex', {
      token: h.tenants.acme.operators.approver.token,
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body['issues']).toEqual([{ path: '$.tenant', message: 'unknown query parameter' }]);
  });

  it('GET /audit returns the events with short hashes', async () => {
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const r = await call(h, 'GET', `/api/v1/proposals/${proposed.id}/audit`, {
      token: h.tenants.acme.operators.viewer.token,
    });
    expect(r.status).toBe(200);
    const events = r.body['events'] as { step: string; short: { proposed?: string }; actor: string }[];
    expect(events.map((e) => e.step)).toEqual(['proposed']);
    expect(events[0]?.short.proposed).toBe(proposed.short);
    expect(events[0]?.actor).toBe('agent:acme-assistant');
  });
});

describe('deciding', () => {
  it('approves the digest the operator saw: 200 with the outcome; a replay returns the stored outcome and nothing runs again', async () => {
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const calls = h.world.provider.calls;
    const token = h.tenants.acme.operators.approver.token;
    const first = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token,
      body: { seenDigest: proposed.digest },
    });
    expect(first.status).toBe(200);
    expect(first.body['replayed']).toBe(false);
    expect(first.body['outcome']).toMatchObject({ kind: 'succeeded' });
    const again = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token: h.tenants.acme.operators.admin.token,
      body: { seenDigest: proposed.digest },
    });
    expect(again.status).toBe(200);
    expect(again.body['replayed']).toBe(true);
    expect(again.body['outcome']).toEqual(first.body['outcome']);
    expect(h.world.provider.calls).toBe(calls + 1);
    const read = await call(h, 'GET', `/api/v1/proposals/${proposed.id}`, { token });
    expect(read.body['status']).toBe('succeeded');
    expect(read.body['handback']).toMatch(
      /^Approved by a human; the application executed it\. The invoice was paid \(payment pay_\d+\)\.$/,
    );
  });

  it('refuses another digest with 409 stale_view and executes nothing', async () => {
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const r = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: 'f'.repeat(64) },
    });
    expect(r.status).toBe(409);
    expect(r.body['reason']).toBe('stale_view');
    expect((await h.engine.proposals.get('acme', proposed.id))?.status).toBe('pending');
  });

  it('refuses a short hash instead of the full digest with 422 invalid_digest, writing nothing', async () => {
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const before = (await h.engine.audit.events('acme', proposed.id)).length;
    for (const seenDigest of [proposed.short, proposed.digest.toUpperCase(), `${proposed.digest} `]) {
      const r = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
        token: h.tenants.acme.operators.approver.token,
        body: { seenDigest },
      });
      expect([r.status, r.body['reason']]).toEqual([422, 'invalid_digest']);
    }
    expect((await h.engine.audit.events('acme', proposed.id)).length).toBe(before);
  });

  it('refuses a link of another run with 409 run_mismatch', async () => {
    const proposed = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const r = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token: h.tenants.acme.operators.approver.token,
      body: { seenDigest: proposed.digest, runId: 'run-someone-else' },
    });
    expect(r.status).toBe(409);
    expect(r.body['reason']).toBe('run_mismatch');
  });

  it('edits into a new proposal (201, new digest); the old one then refuses approval with 409 superseded naming the new one', async () => {
    const proposed = await proposeViaApi(h, 'acme', {
      operation: 'email_broadcast.apply_draft',
      request: { broadcast_id: 'bc-spring', subject: 'Hello', body: 'Opening day.' },
      resource: 'broadcast:bc-spring',
    });
    const token = h.tenants.acme.operators.approver.token;
    const edited = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/edit`, {
      token,
      body: { changes: { subject: 'Hello again' } },
    });
    expect(edited.status).toBe(201);
    expect(edited.body['superseded']).toBe(proposed.id);
    expect(edited.body['digest']).not.toBe(proposed.digest);
    expect(edited.body['status']).toBe('pending');
    const old = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token,
      body: { seenDigest: proposed.digest },
    });
    expect(old.status).toBe(409);
    expect(old.body['reason']).toBe('superseded');
    expect(old.body['supersededBy']).toBe(edited.body['id']);
  });

  it('refuses an edit of a field that is not editable with 422 invalid_request', async () => {
    const proposed = await proposeViaApi(h, 'acme', {
      operation: 'email_broadcast.apply_draft',
      request: { broadcast_id: 'bc-spring', subject: 'Hello', body: 'Opening day.' },
      resource: 'broadcast:bc-spring',
    });
    const r = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/edit`, {
      token: h.tenants.acme.operators.approver.token,
      body: { changes: { broadcast_id: 'bc-other' } },
    });
    expect(r.status).toBe(422);
    expect(r.body['reason']).toBe('invalid_request');
  });

  it('declines (200), after which approval is 409 declined; an expired proposal is 409 expired', async () => {
    const token = h.tenants.acme.operators.approver.token;
    const declined = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    const d = await call(h, 'POST', `/api/v1/proposals/${declined.id}/decline`, {
      token,
      body: { reason: 'not this month' },
    });
    expect(d.status).toBe(200);
    const after = await call(h, 'POST', `/api/v1/proposals/${declined.id}/approve`, {
      token,
      body: { seenDigest: declined.digest },
    });
    expect(after.status).toBe(409);
    expect(after.body['reason']).toBe('declined');
    const read = await call(h, 'GET', `/api/v1/proposals/${declined.id}`, {
      token: h.tenants.acme.agentToken,
    });
    expect(read.body['handback']).toBe('A human declined it: not this month');

    const late = await proposeViaApi(h, 'acme', pay(freshInvoice(h.world, 'acme')));
    h.clock.advance(31 * 60_000);
    const expired = await call(h, 'POST', `/api/v1/proposals/${late.id}/approve`, {
      token,
      body: { seenDigest: late.digest },
    });
    expect(expired.status).toBe(409);
    expect(expired.body['reason']).toBe('expired');
  });

  it('a lost provider response is needs_reconciliation; reconcile (200) records the provider’s payment', async () => {
    const invoice = freshInvoice(h.world, 'acme');
    h.world.provider.failWhen((r) => r.reference === invoice, 'timeout_after_commit');
    const proposed = await proposeViaApi(h, 'acme', pay(invoice));
    const token = h.tenants.acme.operators.approver.token;
    const approved = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/approve`, {
      token,
      body: { seenDigest: proposed.digest },
    });
    expect(approved.status).toBe(200);
    expect(approved.body['outcome']).toEqual({
      kind: 'needs_reconciliation',
      statusPath: `/api/v1/proposals/${proposed.id}`,
    });
    const reconciled = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/reconcile`, {
      token,
      body: {},
    });
    expect(reconciled.status).toBe(200);
    expect(reconciled.body['outcome']).toMatchObject({ kind: 'succeeded' });
    const again = await call(h, 'POST', `/api/v1/proposals/${proposed.id}/reconcile`, { token, body: {} });
    expect(again.status).toBe(409);
    expect(again.body['reason']).toBe('replayed');
  });
});

describe('service endpoints', () => {
  it('GET /healthz answers ok', async () => {
    const r = await call(h, 'GET', '/healthz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ok' });
  });

  it('serves an OpenAPI 3.1 document naming every route and the strict request bodies', async () => {
    const r = await call(h, 'GET', '/api/v1/openapi.json');
    expect(r.status).toBe(200);
    expect(r.body['openapi']).toBe('3.1.0');
    expect(Object.keys(r.body['paths'] as object).sort()).toEqual([
      '/api/v1/deliveries',
      '/api/v1/deliveries/{id}/redeliver',
      '/api/v1/events',
      '/api/v1/grants',
      '/api/v1/grants/{id}',
      '/api/v1/grants/{id}/revoke',
      '/api/v1/groups',
      '/api/v1/groups/{name}',
      '/api/v1/openapi.json',
      '/api/v1/operators',
      '/api/v1/operators/{id}',
      '/api/v1/proposals',
      '/api/v1/proposals/{id}',
      '/api/v1/proposals/{id}/approve',
      '/api/v1/proposals/{id}/audit',
      '/api/v1/proposals/{id}/decline',
      '/api/v1/proposals/{id}/edit',
      '/api/v1/proposals/{id}/reconcile',
      '/api/v1/routes',
      '/api/v1/routes/{id}',
      '/api/v1/slack/users',
      '/api/v1/slack/users/{slackUser}',
      '/healthz',
      '/readyz',
    ]);
    // Every API operation names the 503 a store outage answers.
    const paths = r.body['paths'] as Record<string, Record<string, { responses: Record<string, unknown> }>>;
    for (const [path, operations] of Object.entries(paths)) {
      if (!path.startsWith('/api/v1/') || path === '/api/v1/openapi.json') continue;
      for (const [method, operation] of Object.entries(operations))
        expect(operation.responses['503'], `${method} ${path}`).toBeDefined();
    }
    const schemas = (
      r.body['components'] as {
        schemas: Record<string, { additionalProperties?: boolean; required?: string[] }>;
      }
    ).schemas;
    expect(schemas['ApproveBody']?.additionalProperties).toBe(false);
    expect(schemas['ApproveBody']?.required).toEqual(['seenDigest']);
    expect(schemas['Problem']?.required).toEqual(['type', 'title', 'status', 'detail', 'reason', 'message']);
    // Every error response is problem details; every operation that reads a body names its 413.
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400 || path === '/readyz') continue;
          expect(
            Object.keys((response as { content?: object }).content ?? {}),
            `${method} ${path} ${status}`,
          ).toEqual(['application/problem+json']);
        }
        if ((operation as { requestBody?: unknown }).requestBody !== undefined)
          expect(operation.responses['413'], `${method} ${path}`).toBeDefined();
      }
    }
  });

  it('answers an unknown API route with 404 not_found as RFC 9457 problem details', async () => {
    const r = await call(h, 'GET', '/api/v1/nothing-here', { token: h.tenants.acme.agentToken });
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toEqual({
      type: 'urn:countersign:problem:not_found',
      title: 'Not found',
      status: 404,
      detail: 'no such page',
      reason: 'not_found',
      message: 'no such page',
    });
  });

  it('keeps the occurrence members of a refusal beside the RFC 9457 ones', async () => {
    const r = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: { ...pay('inv-104'), request: { invoice_id: 'inv-104', amount_minor: 1 } },
    });
    expect(r.status).toBe(422);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.body).toMatchObject({
      type: 'urn:countersign:problem:invalid_request',
      title: 'Invalid request',
      status: 422,
      reason: 'invalid_request',
    });
    expect(r.body['detail']).toBe(r.body['message']);
    expect(r.body['issues']).toEqual([{ path: '$.amount_minor', message: 'unknown field' }]);
    expect(r.body['modelMessage']).toContain('$.amount_minor: unknown field');
  });
});
