import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConsoleClient } from './support/console-client.js';
import {
  call,
  freshInvoice,
  proposeViaApi,
  type Role,
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

/** What the console page offers this operator: the Approve form, the Decline form, the reason shown. */
async function consoleView(role: Role, proposalId: string) {
  const op = h.tenants.acme.operators[role];
  const client = new ConsoleClient(h.url);
  expect((await client.login(op.email, op.password)).status).toBe(303);
  const page = await client.get(`/proposals/${proposalId}`);
  expect(page.status).toBe(200);
  const refused = /data-testid="decision-refused"[\s\S]*?<code class="reason-code">([a-z_]+)<\/code>/.exec(
    page.html,
  );
  return {
    approveForm: page.html.includes(`action="/proposals/${proposalId}/approve"`),
    declineForm: page.html.includes(`action="/proposals/${proposalId}/decline"`),
    reason: refused?.[1],
  };
}

/** What the engine answers the same operator over the API. */
async function apiApprove(role: Role, proposalId: string, digest: string) {
  const r = await call(h, 'POST', `/api/v1/proposals/${proposalId}/approve`, {
    token: h.tenants.acme.operators[role].token,
    body: { seenDigest: digest },
  });
  return { status: r.status, reason: r.body['reason'] as string | undefined };
}

describe('the console offers Approve exactly when the engine would accept it', () => {
  it('a viewer: no decision forms, and the reason the engine refuses with (forbidden)', async () => {
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme') },
    });
    expect(await consoleView('viewer', p.id)).toEqual({
      approveForm: false,
      declineForm: false,
      reason: 'forbidden',
    });
    expect(await apiApprove('viewer', p.id, p.digest)).toEqual({ status: 403, reason: 'forbidden' });
  });

  it('the editor of a proposal: Decline but no Approve, with separation_of_duties as the engine says', async () => {
    const p = await proposeViaApi(h, 'acme', {
      operation: 'email_broadcast.apply_draft',
      request: { broadcast_id: 'bc-spring', subject: 'Season opens', body: 'See you Saturday.' },
    });
    const edited = await call(h, 'POST', `/api/v1/proposals/${p.id}/edit`, {
      token: h.tenants.acme.operators.approver.token,
      body: { changes: { subject: 'Season opens Saturday' } },
    });
    const next = edited.body as { id: string; digest: string };
    expect(await consoleView('approver', next.id)).toEqual({
      approveForm: false,
      declineForm: true,
      reason: 'separation_of_duties',
    });
    expect(await apiApprove('approver', next.id, next.digest)).toEqual({
      status: 403,
      reason: 'separation_of_duties',
    });
    // Another approver is offered Approve, and the engine accepts it.
    expect(await consoleView('admin', next.id)).toEqual({
      approveForm: true,
      declineForm: true,
      reason: undefined,
    });
    expect((await apiApprove('admin', next.id, next.digest)).status).toBe(200);
  });

  it('a quorum proposal: whoever already approved is not offered Approve again (already_approved)', async () => {
    // inv-105 is due 12,500.00 USD: two approvers.
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: 'inv-105' },
    });
    expect((await consoleView('approver', p.id)).approveForm).toBe(true);
    expect((await apiApprove('approver', p.id, p.digest)).status).toBe(202);
    expect(await consoleView('approver', p.id)).toEqual({
      approveForm: false,
      declineForm: true,
      reason: 'already_approved',
    });
    expect(await apiApprove('approver', p.id, p.digest)).toEqual({ status: 409, reason: 'already_approved' });
    expect((await consoleView('admin', p.id)).approveForm).toBe(true);
  });

  it('engine.mayDecide answers with the reason approve refuses with, for each operator', async () => {
    const p = await proposeViaApi(h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: freshInvoice(h.world, 'acme') },
    });
    const proposal = (await h.engine.proposals.get('acme', p.id))!;
    const viewer = {
      id: 'user:viewer@acme.test',
      tenant: 'acme',
      kind: 'operator' as const,
      roles: ['viewer'],
    };
    const stranger = { ...viewer, tenant: 'globex', roles: ['approver'] };
    const agent = {
      id: proposal.requestedBy,
      tenant: 'acme',
      kind: 'operator' as const,
      roles: ['approver'],
    };
    expect(h.engine.proposals.mayDecide(viewer, proposal)).toMatchObject({
      kind: 'refused',
      reason: 'forbidden',
    });
    expect(h.engine.proposals.mayDecide(stranger, proposal)).toMatchObject({
      kind: 'refused',
      reason: 'not_found',
    });
    expect(h.engine.proposals.mayDecide(agent, proposal)).toMatchObject({
      kind: 'refused',
      reason: 'separation_of_duties',
    });
    // The proposer may still decline: declining is not approving.
    expect(h.engine.proposals.mayDecide(agent, proposal, 'decline')).toEqual({ kind: 'allowed' });
    for (const [actor, expected] of [
      [viewer, 'forbidden'],
      [stranger, 'not_found'],
      [agent, 'separation_of_duties'],
    ] as const) {
      const r = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: p.id,
        approver: actor,
        seenDigest: p.digest,
      });
      expect(r).toMatchObject({ kind: 'not_approvable', reason: expected });
    }
  });
});
