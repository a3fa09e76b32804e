import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { evaluateGrant } from '../../src/grants/grant.js';
import type { Actor } from '../../src/index.js';
import type { GrantInput } from '../../src/engine/index.js';
import type { GrantRecord } from '../../src/store/records.js';
import { agent, approver, type Harness, harness } from '../support/engine.js';

const admin: Actor = { id: 'user:root@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };
const HOUR = 3_600_000;

let h: Harness;
beforeEach(async () => {
  h = await harness();
  for (const [id, minor, currency] of [
    ['inv-a', 10_000, 'USD'],
    ['inv-b', 10_001, 'USD'],
    ['inv-c', 9_999, 'USD'],
    ['inv-eur', 5_000, 'EUR'],
  ] as const) {
    for (let i = 0; i < 30; i++) {
      h.world.invoices.add({
        tenant: 'acme',
        id: `${id}-${i}`,
        supplierName: 'Supplier',
        supplierAccount: 'acct-supplier-1',
        dueMinor: minor,
        currency,
        status: 'open',
      });
    }
  }
});
afterEach(async () => {
  await h.close();
});

function policy(overrides: Partial<GrantInput> = {}): GrantInput {
  return {
    tenant: 'acme',
    grantedBy: admin,
    subject: agent().id,
    operations: ['invoice.pay'],
    resource: 'invoice:*',
    constraints: { amount_minor: { max: 10_000 }, currency: { equals: 'USD' } },
    cap: { field: 'amount_minor', total: 30_000 },
    expiresAt: h.clock.now() + 6 * HOUR,
    ...overrides,
  };
}

let counter = 0;
async function pay(invoice: string, requestedBy = agent().id) {
  const r = await h.engine.proposals.propose({
    operation: 'invoice.pay',
    request: { invoice_id: invoice },
    tenant: 'acme',
    resource: `invoice:${invoice}`,
    requestedBy,
    runId: `run-${counter++}`,
  });
  if (r.kind !== 'proposed') throw new Error(r.modelMessage);
  return r;
}

async function createGrant(overrides: Partial<GrantInput> = {}) {
  const r = await h.engine.grants.create(policy(overrides));
  if (r.kind !== 'granted') throw new Error(JSON.stringify(r));
  return r.grant;
}

describe('a grant approves what fits and nothing else', () => {
  it('a proposal inside a live grant is approved by it, executes through the same claim, and is audited as such', async () => {
    const grant = await createGrant();
    const r = await pay('inv-c-0');
    expect(r.grant).toMatchObject({
      kind: 'approved_by_grant',
      grantId: grant.id,
      outcome: { kind: 'succeeded' },
    });
    expect(r.proposal.status).toBe('succeeded');
    expect(r.proposal.approvalKind).toBe('grant');
    expect(r.proposal.grantId).toBe(grant.id);
    expect(h.world.provider.calls).toBe(1);
    const approved = (await h.engine.audit.events('acme', r.proposal.id)).find((e) => e.step === 'approved');
    expect(approved).toMatchObject({
      reason: 'approved_by_grant',
      actor: `grant:${grant.id}`,
      detail: { grantId: grant.id },
    });
    const [listed] = await h.engine.grants.list('acme');
    expect(listed?.usage).toEqual({ uses: 1, total: 9_999 });
  });

  it.each([
    ['inv-a-0', 'fits', undefined],
    ['inv-b-0', 'outside_grant', '$.amount_minor: 10001 > max 10000'],
    ['inv-eur-0', 'outside_grant', '$.currency: "EUR" is not "USD"'],
  ])('the max boundary and the currency: %s → %s', async (invoice, expected, detail) => {
    await createGrant();
    const r = await pay(invoice);
    if (expected === 'fits') {
      expect(r.grant?.kind).toBe('approved_by_grant');
    } else {
      expect(r.grant).toMatchObject({ kind: 'refused', reason: expected, detail });
      expect(r.proposal.status).toBe('pending');
      const denied = (await h.engine.audit.events('acme', r.proposal.id)).find((e) => e.step === 'denied');
      expect(denied?.reason).toBe(expected);
      // It still waits for a human, who can approve it as usual.
      const human = await h.engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: r.proposal.id,
        approver: approver(),
        seenDigest: r.proposal.digest,
      });
      expect(human.kind).toBe('completed');
    }
  });

  it('a resource outside the boundary is outside_grant', async () => {
    await createGrant({ resource: 'invoice:inv-a-0' });
    expect((await pay('inv-a-1')).grant).toMatchObject({
      reason: 'outside_grant',
      detail: 'resource invoice:inv-a-1 is outside invoice:inv-a-0',
    });
    expect((await pay('inv-a-0')).grant?.kind).toBe('approved_by_grant');
  });

  it("another agent's proposals are not covered at all", async () => {
    await createGrant();
    const r = await pay('inv-c-0', 'agent:acme-other');
    expect(r.grant).toBeUndefined();
    expect(r.proposal.status).toBe('pending');
  });
});

describe('which grants are considered', () => {
  /** `count` grants to the agent, a millisecond apart, none of which covers `invoice.pay`. */
  async function grantsForAnotherOperation(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      h.clock.advance(1);
      await createGrant({
        operations: ['order.refund_missing_discount'],
        resource: 'order:*',
        constraints: {},
        cap: { uses: 1 },
      });
    }
  }

  it('an agent with 120 grants where only the oldest covers the operation is approved through it', async () => {
    const oldest = await createGrant();
    await grantsForAnotherOperation(119);
    expect((await h.engine.grants.list('acme', { subject: agent().id, limit: 500 })).length).toBe(120);
    const r = await pay('inv-c-0');
    expect(r.grant).toMatchObject({
      kind: 'approved_by_grant',
      grantId: oldest.id,
      outcome: { kind: 'succeeded' },
    });
    expect(r.proposal.grantId).toBe(oldest.id);
    expect(h.world.provider.calls).toBe(1);
  });

  it('an agent with 120 grants, none covering the operation, waits for a human without a refusal', async () => {
    await grantsForAnotherOperation(120);
    const r = await pay('inv-c-0');
    expect(r.grant).toBeUndefined();
    expect(r.proposal.status).toBe('pending');
    expect((await h.engine.audit.events('acme', r.proposal.id)).map((e) => e.step)).toEqual(['proposed']);
    expect(h.world.provider.calls).toBe(0);
  });
});

describe('caps', () => {
  it('the cumulative cap holds at its exact boundary: 3 × 100.00 fits 300.00, the 4th is grant_exhausted', async () => {
    await createGrant();
    for (let i = 0; i < 3; i++) expect((await pay(`inv-a-${i}`)).grant?.kind).toBe('approved_by_grant');
    const fourth = await pay('inv-a-3');
    expect(fourth.grant).toMatchObject({
      kind: 'refused',
      reason: 'grant_exhausted',
      detail: '$.amount_minor: 30000 + 10000 > cap 30000',
    });
    expect((await h.engine.grants.list('acme'))[0]).toMatchObject({
      usage: { uses: 3, total: 30_000 },
      state: 'exhausted',
    });
  });

  it('a count of uses', async () => {
    await createGrant({ cap: { uses: 2 } });
    expect((await pay('inv-c-0')).grant?.kind).toBe('approved_by_grant');
    expect((await pay('inv-c-1')).grant?.kind).toBe('approved_by_grant');
    expect((await pay('inv-c-2')).grant).toMatchObject({ reason: 'grant_exhausted' });
  });

  it('N concurrent proposals never spend more than the cap', async () => {
    await createGrant({ cap: { field: 'amount_minor', total: 50_000 } });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => pay(`inv-a-${i}`)));
    const byGrant = results.filter((r) => r.grant?.kind === 'approved_by_grant');
    expect(byGrant).toHaveLength(5);
    expect(
      results.filter((r) => r.grant?.kind === 'refused' && r.grant.reason === 'grant_exhausted'),
    ).toHaveLength(15);
    expect((await h.engine.grants.list('acme'))[0]?.usage).toEqual({ uses: 5, total: 50_000 });
    expect(h.world.provider.payments.reduce((sum, p) => sum + p.amount_minor, 0)).toBe(50_000);
  });
});

describe('expiry and revocation', () => {
  it('at the expiry instant ±1 ms', async () => {
    const expiresAt = h.clock.now() + HOUR;
    await createGrant({ expiresAt });
    h.clock.time = expiresAt - 1;
    expect((await pay('inv-c-0')).grant?.kind).toBe('approved_by_grant');
    h.clock.time = expiresAt;
    expect((await pay('inv-c-1')).grant).toMatchObject({ kind: 'refused', reason: 'expired' });
    h.clock.time = expiresAt + 1;
    expect((await pay('inv-c-2')).grant).toMatchObject({ kind: 'refused', reason: 'expired' });
  });

  it('a revoked grant approves nothing; revoking twice is grant_revoked', async () => {
    const grant = await createGrant();
    expect(await h.engine.grants.revoke({ tenant: 'acme', grantId: grant.id, actor: admin })).toEqual({
      kind: 'revoked',
    });
    expect((await pay('inv-c-0')).grant).toMatchObject({ kind: 'refused', reason: 'grant_revoked' });
    expect(await h.engine.grants.revoke({ tenant: 'acme', grantId: grant.id, actor: admin })).toMatchObject({
      reason: 'grant_revoked',
    });
    expect((await h.engine.grants.list('acme'))[0]?.state).toBe('revoked');
  });

  it('revocation racing proposals: each proposal is either approved before the revocation or refused after it', async () => {
    const grant = await createGrant({ cap: { uses: 100 } });
    const racing = await Promise.all([
      ...Array.from({ length: 10 }, (_, i) => pay(`inv-c-${i}`)),
      h.engine.grants.revoke({ tenant: 'acme', grantId: grant.id, actor: admin }),
      ...Array.from({ length: 10 }, (_, i) => pay(`inv-c-${10 + i}`)),
    ]);
    const proposals = racing.filter((r): r is Awaited<ReturnType<typeof pay>> => 'proposal' in r);
    const approved = proposals.filter((r) => r.grant?.kind === 'approved_by_grant');
    const revoked = proposals.filter(
      (r) => r.grant?.kind === 'refused' && r.grant.reason === 'grant_revoked',
    );
    expect(approved.length + revoked.length).toBe(20);
    expect((await h.engine.grants.list('acme'))[0]?.usage.uses).toBe(approved.length);
    expect(h.world.provider.calls).toBe(approved.length);
    const audit = await h.engine.audit.events('acme', grant.id);
    expect(audit.map((e) => e.step)).toEqual(['granted', 'revoked']);
  });
});

describe('who may grant, and what a grant may say', () => {
  it('creating or revoking a grant requires the admin role', async () => {
    expect(await h.engine.grants.create({ ...policy(), grantedBy: approver() })).toMatchObject({
      kind: 'forbidden',
      reason: 'forbidden',
    });
    const grant = await createGrant();
    expect(
      await h.engine.grants.revoke({ tenant: 'acme', grantId: grant.id, actor: approver() }),
    ).toMatchObject({
      reason: 'forbidden',
    });
    expect(
      await h.engine.grants.revoke({
        tenant: 'globex',
        grantId: grant.id,
        actor: { ...admin, tenant: 'globex' },
      }),
    ).toMatchObject({ reason: 'not_found' });
  });

  it('constraints are typed per scope field; problems are named', async () => {
    const r = await h.engine.grants.create(
      policy({
        operations: ['invoice.pay', 'invoice.delete'],
        constraints: {
          amount_minor: { max: 10_000 },
          currency: { equals: 'usd' },
          colour: { equals: 'red' },
          invoice_id: { max: 3 },
        },
        cap: { field: 'currency', total: 5 },
        resource: '*',
        subject: 'user:bob',
      }),
    );
    expect(r.kind).toBe('invalid_grant');
    if (r.kind !== 'invalid_grant') return;
    expect(r.issues.map((i) => i.path).sort()).toEqual(
      [
        '$.cap.field',
        '$.constraints.colour',
        '$.constraints.currency',
        '$.constraints.invoice_id',
        '$.operations[1]',
        '$.resource',
        '$.subject',
      ].sort(),
    );
  });

  // `shape['constructor']` is the Object function: such bounds once threw instead of being named.
  it('a bound or cap named like an Object.prototype member is not a scope field', async () => {
    for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
      const constraints = JSON.parse(`{"${name}":{"max":5}}`) as Record<string, unknown>;
      expect(await h.engine.grants.create(policy({ constraints, cap: { uses: 3 } }))).toEqual({
        kind: 'invalid_grant',
        issues: [{ path: `$.constraints.${name}`, message: 'not a scope field of invoice.pay' }],
      });
      expect(await h.engine.grants.create(policy({ cap: { field: name, total: 5 } }))).toEqual({
        kind: 'invalid_grant',
        issues: [{ path: '$.cap.field', message: `${name} is not a numeric scope field of invoice.pay` }],
      });
    }
    expect(await h.engine.grants.list('acme')).toEqual([]);
  });

  it('a stored bound on a field the scope lacks reads the field as missing, not as Object.prototype', () => {
    const record: GrantRecord = {
      tenant: 'acme',
      id: 'grt_x',
      subject: agent().id,
      operationsJson: '["invoice.pay"]',
      resource: 'invoice:*',
      constraintsJson: '{"constructor":{"equals":null}}',
      capField: 'toString',
      capTotal: 100,
      capUses: null,
      usedCount: 0,
      usedTotal: 0,
      expiresAt: Number.MAX_SAFE_INTEGER,
      createdAt: 0,
      createdBy: admin.id,
      revokedAt: null,
      revokedBy: null,
      note: null,
      satisfiesQuorum: false,
      seal: null,
    };
    const scope = { amount_minor: 5, currency: 'USD' };
    // `constructor` is absent (null), so `equals: null` holds; the cap field is absent, not a function.
    expect(evaluateGrant(record, scope, 'invoice:inv-1', 0)).toEqual({
      kind: 'refused',
      reason: 'outside_grant',
      detail: '$.toString is not a whole number',
    });
    expect(
      evaluateGrant({ ...record, constraintsJson: '{"valueOf":{"max":5}}' }, scope, 'invoice:inv-1', 0),
    ).toEqual({ kind: 'refused', reason: 'outside_grant', detail: '$.valueOf: null is not a number' });
  });

  it('a card that showed one concrete action never becomes a grant', async () => {
    const r = await pay('inv-c-0');
    await h.engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: r.proposal.id,
      approver: approver(),
      seenDigest: r.proposal.digest,
    });
    expect(await h.engine.grants.list('acme')).toEqual([]);
    expect((await pay('inv-c-1')).grant).toBeUndefined();
  });
});
