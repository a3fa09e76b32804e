import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-client.js';
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

const draft = () =>
  proposeViaApi(h, 'acme', {
    operation: 'email_broadcast.apply_draft',
    request: { broadcast_id: 'bc-spring', subject: 'Season opens', body: 'See you Saturday.' },
  });

describe('four eyes over HTTP: the editor does not approve their own edit', () => {
  it('the API refuses the editor with 403 separation_of_duties; another operator approves', async () => {
    const proposal = await draft();
    const { token } = h.tenants.acme.operators.approver;
    const edited = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/edit`, {
      token,
      body: { changes: { subject: 'Season opens Saturday' } },
    });
    expect(edited.status).toBe(201);
    const next = edited.body as { id: string; digest: string; editedBy: string; requestedBy: string };
    expect(next.editedBy).toBe(`user:${h.tenants.acme.operators.approver.email}`);
    expect(next.requestedBy).toMatch(/^agent:/);
    const own = await call(h, 'POST', `/api/v1/proposals/${next.id}/approve`, {
      token,
      body: { seenDigest: next.digest },
    });
    expect(own.status).toBe(403);
    expect(own.body['reason']).toBe('separation_of_duties');
    const other = await call(h, 'POST', `/api/v1/proposals/${next.id}/approve`, {
      token: h.tenants.acme.operators.admin.token,
      body: { seenDigest: next.digest },
    });
    expect(other.status).toBe(200);
  });

  it('the console shows the editor who edited and offers them no Approve button', async () => {
    const proposal = await draft();
    const op = h.tenants.acme.operators.approver;
    await call(h, 'POST', `/api/v1/proposals/${proposal.id}/edit`, {
      token: op.token,
      body: { changes: { body: 'See you on Saturday.' } },
    });
    const next = (await h.engine.proposals.list('acme', { status: 'pending', limit: 1 })).items[0]!;
    expect(next.supersedes).toBe(proposal.id);
    const client = new ConsoleClient(h.url);
    expect((await client.login(op.email, op.password)).status).toBe(303);
    const page = await client.get(`/proposals/${next.id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Edited by');
    expect(page.html).not.toContain('class="approve-form"');
  });

  it("an agent deciding on a colleague's proposal gets 404 not_found, like a missing id", async () => {
    const colleague = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'colleague' });
    const proposal = await draft();
    for (const action of ['approve', 'decline', 'edit', 'reconcile'] as const) {
      const body =
        action === 'approve'
          ? { seenDigest: proposal.digest }
          : action === 'edit'
            ? { changes: { subject: 'x' } }
            : {};
      const r = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/${action}`, {
        token: colleague,
        body,
      });
      expect([action, r.status, r.body['reason']]).toEqual([action, 404, 'not_found']);
    }
    const own = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token: h.tenants.acme.agentToken,
      body: { seenDigest: proposal.digest },
    });
    expect(own.status).toBe(403);
  });

  it('the approve API asserts the expected section and resource', async () => {
    const invoice = freshInvoice(h.world, 'acme');
    const proposal = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
    });
    const { token } = h.tenants.acme.operators.approver;
    const wrong = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token,
      body: { seenDigest: proposal.digest, expectedResource: 'invoice:inv-other' },
    });
    expect([wrong.status, wrong.body['reason']]).toEqual([409, 'resource_mismatch']);
    const labelled = await call(h, 'POST', '/api/v1/proposals', {
      token: h.tenants.acme.agentToken,
      body: {
        operation: 'invoice.pay',
        request: { invoice_id: freshInvoice(h.world, 'acme') },
        resource: `invoice:${invoice}`,
        runId: 'run-label',
      },
    });
    expect([labelled.status, labelled.body['reason']]).toEqual([409, 'resource_mismatch']);
    const ok = await call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
      token,
      body: { seenDigest: proposal.digest, expectedResource: `invoice:${invoice}`, expectedSection: null },
    });
    expect(ok.status).toBe(200);
  });
});
