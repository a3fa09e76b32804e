import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, freshInvoice, type ServerHarness, serverHarness } from './support/server-harness.js';

type Role = 'anonymous' | 'agent' | 'approver' | 'viewer' | 'admin';
type Action = 'propose' | 'list' | 'get' | 'audit' | 'approve' | 'decline' | 'edit' | 'reconcile';
/** `own`: the caller's tenant owns the proposal; `other`: it belongs to another tenant. */
type Tenant = 'own' | 'other';

/**
 * THE authorization table: every (role, action, tenant) allowed, with its status. Everything not
 * listed is denied: anonymous → 401 `unauthenticated`, another tenant → 404 `not_found` (exactly
 * like a missing proposal), otherwise → 403 `forbidden`. Notably absent: viewers deciding, agents
 * deciding (the proposing agent cannot approve its own proposal), operators proposing.
 */
type Case = `${Role} ${Action} ${Tenant}`;
const ALLOWED: Readonly<Partial<Record<Case, number>>> = {
  'agent propose own': 201,
  'agent list own': 200,
  'approver list own': 200,
  'viewer list own': 200,
  'admin list own': 200,
  'agent get own': 200,
  'approver get own': 200,
  'viewer get own': 200,
  'admin get own': 200,
  'agent audit own': 200,
  'approver audit own': 200,
  'viewer audit own': 200,
  'admin audit own': 200,
  'approver approve own': 200,
  'admin approve own': 200,
  'approver decline own': 200,
  'admin decline own': 200,
  'approver edit own': 201,
  'admin edit own': 201,
  'approver reconcile own': 200,
  'admin reconcile own': 200,
};

const ROLES: readonly Role[] = ['anonymous', 'agent', 'approver', 'viewer', 'admin'];
const TARGETED: readonly Action[] = ['get', 'audit', 'approve', 'decline', 'edit', 'reconcile'];
// Proposing and listing name no proposal: the tenant is always the caller's own.
const UNTARGETED: readonly Action[] = ['propose', 'list'];

function denial(role: Role, tenant: Tenant): { status: number; reason: string } {
  if (role === 'anonymous') return { status: 401, reason: 'unauthenticated' };
  if (tenant === 'other') return { status: 404, reason: 'not_found' };
  return { status: 403, reason: 'forbidden' };
}

let h: ServerHarness;
let missingBody: Record<string, unknown>;
beforeAll(async () => {
  // One agent proposes a fixture for every cell of the matrix, past the default 50 pending.
  h = await serverHarness({ limits: { perAgent: { pending: 1_000, proposalsPerMinute: 1_000 } } });
  missingBody = (
    await call(h, 'GET', '/api/v1/proposals/prp_0000000000000000000000000', {
      token: h.tenants.acme.operators.approver.token,
    })
  ).body;
});
afterAll(async () => {
  await h.close();
});

function tokenOf(role: Role, tenant: Tenant): string | undefined {
  if (role === 'anonymous') return undefined;
  const t = h.tenants[tenant === 'own' ? 'acme' : 'globex'];
  return role === 'agent' ? t.agentToken : t.operators[role].token;
}

/** A fresh acme proposal in the state the action needs: pending, an editable draft, or needs_reconciliation. */
async function fixture(action: Action) {
  const agent = { id: 'agent:acme-assistant', tenant: 'acme', kind: 'agent' as const, roles: [] };
  if (action === 'edit') {
    const r = await h.engine.proposals.propose({
      operation: 'email_broadcast.apply_draft',
      request: { broadcast_id: 'bc-spring', subject: 'Hello', body: 'Opening day.' },
      tenant: 'acme',
      resource: 'broadcast:bc-spring',
      requestedBy: agent.id,
      runId: 'run-matrix',
    });
    if (r.kind !== 'proposed') throw new Error('fixture');
    return r.proposal;
  }
  const invoice = freshInvoice(h.world, 'acme');
  const r = await h.engine.proposals.propose({
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    tenant: 'acme',
    resource: `invoice:${invoice}`,
    requestedBy: agent.id,
    runId: 'run-matrix',
  });
  if (r.kind !== 'proposed') throw new Error('fixture');
  if (action === 'reconcile') {
    h.world.provider.failWhen((req) => req.reference === invoice, 'timeout_after_commit');
    const approver = {
      id: 'user:fixture@acme.test',
      tenant: 'acme',
      kind: 'operator' as const,
      roles: ['approver'],
    };
    const done = await h.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: r.proposal.id,
      approver,
      seenDigest: r.proposal.digest,
    });
    if (done.kind !== 'completed' || done.outcome.kind !== 'needs_reconciliation') throw new Error('fixture');
    return (await h.engine.proposals.get('acme', r.proposal.id))!;
  }
  return r.proposal;
}

async function perform(
  action: Action,
  token: string | undefined,
  target: { id: string; digest: string } | undefined,
) {
  const base = target ? `/api/v1/proposals/${target.id}` : '/api/v1/proposals';
  const options = token ? { token } : {};
  switch (action) {
    case 'propose': {
      const invoice = freshInvoice(h.world, 'acme');
      return call(h, 'POST', base, {
        ...options,
        body: {
          operation: 'invoice.pay',
          request: { invoice_id: invoice },
          resource: `invoice:${invoice}`,
          runId: 'run-matrix',
        },
      });
    }
    case 'list':
      return call(h, 'GET', `${base}?status=pending`, options);
    case 'get':
      return call(h, 'GET', base, options);
    case 'audit':
      return call(h, 'GET', `${base}/audit`, options);
    case 'approve':
      return call(h, 'POST', `${base}/approve`, { ...options, body: { seenDigest: target!.digest } });
    case 'decline':
      return call(h, 'POST', `${base}/decline`, { ...options, body: { reason: 'matrix' } });
    case 'edit':
      return call(h, 'POST', `${base}/edit`, {
        ...options,
        body: { changes: { subject: 'Edited subject' } },
      });
    case 'reconcile':
      return call(h, 'POST', `${base}/reconcile`, { ...options, body: {} });
  }
}

const cases: { role: Role; action: Action; tenant: Tenant }[] = [];
for (const role of ROLES) {
  for (const action of UNTARGETED) cases.push({ role, action, tenant: 'own' });
  for (const action of TARGETED)
    for (const tenant of ['own', 'other'] as const) cases.push({ role, action, tenant });
}

describe('authorization matrix: role × action × tenant (everything not listed is denied)', () => {
  it('every entry of the table is a case that runs', () => {
    const keys = new Set(cases.map((c) => `${c.role} ${c.action} ${c.tenant}`));
    for (const key of Object.keys(ALLOWED)) expect(keys.has(key), key).toBe(true);
    expect(cases).toHaveLength(ROLES.length * (UNTARGETED.length + TARGETED.length * 2));
  });

  for (const c of cases) {
    const key: Case = `${c.role} ${c.action} ${c.tenant}`;
    const allowed = ALLOWED[key];
    const expected =
      allowed !== undefined ? { status: allowed, reason: undefined } : denial(c.role, c.tenant);
    it(`${key} → ${expected.status}${expected.reason ? ` ${expected.reason}` : ''}`, async () => {
      const target = TARGETED.includes(c.action) ? await fixture(c.action) : undefined;
      const before = target ? (await h.engine.proposals.get('acme', target.id))?.status : undefined;
      const r = await perform(c.action, tokenOf(c.role, c.tenant), target);
      expect(r.status).toBe(expected.status);
      if (expected.reason) {
        expect(r.body['reason']).toBe(expected.reason);
        // A denial changes nothing.
        if (target) expect((await h.engine.proposals.get('acme', target.id))?.status).toBe(before);
        // Another tenant's proposal is indistinguishable from a missing one.
        if (
          expected.reason === 'not_found' &&
          c.action !== 'approve' &&
          c.action !== 'decline' &&
          c.action !== 'edit' &&
          c.action !== 'reconcile'
        ) {
          expect(r.body).toEqual(missingBody);
        }
      } else if (c.action === 'approve') {
        expect(r.body['outcome']).toMatchObject({ kind: 'succeeded' });
      } else if (c.action === 'reconcile') {
        expect(r.body['outcome']).toMatchObject({ kind: 'succeeded' });
      } else if (c.action === 'list') {
        const items = r.body['items'] as { id: string }[];
        expect(items.length).toBeGreaterThan(0);
        for (const item of items)
          expect(await h.engine.proposals.get('acme', item.id), item.id).toBeDefined();
      }
    });
  }

  it('a decision on another tenant’s proposal reads exactly like one on a missing proposal', async () => {
    const target = await fixture('approve');
    const token = h.tenants.globex.operators.approver.token;
    const foreign = await call(h, 'POST', `/api/v1/proposals/${target.id}/approve`, {
      token,
      body: { seenDigest: target.digest },
    });
    const missing = await call(h, 'POST', '/api/v1/proposals/prp_0000000000000000000000000/approve', {
      token,
      body: { seenDigest: target.digest },
    });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual(missing.body);
  });

  it('lists never include another tenant’s proposals', async () => {
    const target = await fixture('get');
    const r = await call(h, 'GET', '/api/v1/proposals?limit=200', {
      token: h.tenants.globex.operators.admin.token,
    });
    expect((r.body['items'] as { id: string }[]).some((i) => i.id === target.id)).toBe(false);
  });

  it('a revoked or malformed bearer token is 401 unauthenticated, never a fallback to anything else', async () => {
    const token = await h.directory.issueAgentToken({ tenant: 'acme', agent: 'revoked-one' });
    expect((await call(h, 'GET', '/api/v1/proposals', { token })).status).toBe(200);
    await h.directory.revokeToken(token);
    for (const header of [`Bearer ${token}`, 'Bearer cs_agent_short', 'Basic YWRtaW46YWRtaW4=', 'Bearer']) {
      const r = await call(h, 'GET', '/api/v1/proposals', { headers: { authorization: header } });
      expect(r.status).toBe(401);
      expect(r.body['reason']).toBe('unauthenticated');
      expect(r.headers.get('www-authenticate')).toContain('Bearer');
    }
  });
});
