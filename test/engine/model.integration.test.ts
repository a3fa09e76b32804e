import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld, type DemoWorld } from '../../src/demo/demo-world.js';
import { createEngine, type Engine, type ExecutionContract, verifyAudit } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, storeOn, warmUp } from '../support/backends.js';
import { agent, approver, draftRows, ManualClock } from '../support/engine.js';

interface Model {
  proposals: { id: string; tenant: string; digest: string }[];
  contracts: ExecutionContract[];
}
interface Real {
  engine: Engine;
  store: Store;
  world: DemoWorld;
  clock: ManualClock;
}

const TENANTS = ['acme', 'globex'] as const;
/** The approvers of each tenant: quorum steps pick one of them. */
const APPROVERS = ['ada', 'bob', 'carol'] as const;
const REQUESTS = [
  { operation: 'invoice.pay', request: { invoice_id: 'inv-104' }, resource: 'invoice:inv-104' },
  { operation: 'invoice.pay', request: { invoice_id: 'inv-106' }, resource: 'invoice:inv-106' },
  // 12,500.00 USD: the policy asks two distinct approvers (a quorum).
  { operation: 'invoice.pay', request: { invoice_id: 'inv-105' }, resource: 'invoice:inv-105' },
  {
    operation: 'email_broadcast.apply_draft',
    request: { broadcast_id: 'bc-spring', subject: 'Hi', body: 'Body' },
    resource: 'broadcast:bc-spring',
  },
] as const;

/** After every step: nothing executed twice, every execution approved in its tenant with its digest before expiry, every step audited. */
async function checkInvariants(real: Real): Promise<void> {
  const byProposal = new Map<string, number>();
  for (const p of real.world.provider.payments) {
    const id = p.idempotencyKey.slice(0, p.idempotencyKey.lastIndexOf('.'));
    byProposal.set(id, (byProposal.get(id) ?? 0) + 1);
  }
  for (const [id, n] of byProposal) expect(n, `payments for ${id}`).toBe(1);
  let drafts: readonly Record<string, unknown>[] = [];
  try {
    drafts = await draftRows(real.store);
  } catch {
    // The demo creates its table on the first applied draft: none yet.
    drafts = [];
  }
  expect(new Set(drafts.map((d) => d.proposal_id)).size).toBe(drafts.length);

  for (const tenant of TENANTS) {
    const page = await real.engine.proposals.list(tenant, { limit: 200 });
    for (const p of page.items) {
      const events = await real.engine.audit.events(tenant, p.id);
      expect(events[0]?.step).toBe('proposed');
      const commands = events.filter((e) => e.step === 'command');
      if (commands.length > 0 || ['succeeded', 'needs_reconciliation'].includes(p.status)) {
        const approval = events.find((e) => e.step === 'approved');
        expect(approval, `${p.id} executed without approval`).toBeDefined();
        expect(approval!.tenant).toBe(tenant);
        expect(approval!.digests.approved).toBe(p.digest);
        expect(approval!.digests.seen).toBe(p.digest);
        expect(approval!.at).toBeLessThan(p.expiresAt.getTime());
        for (const c of commands) expect(c.seq).toBeGreaterThan(approval!.seq);
        // A quorum executes only with enough distinct approvers, none of them proposer or editor.
        if (p.approvals.required > 1) {
          const counted = approval!.detail['approvers'] as string[];
          expect(new Set(counted).size).toBe(counted.length);
          expect(counted.length).toBeGreaterThanOrEqual(p.approvals.required);
          expect(counted).not.toContain(p.requestedBy);
          if (p.editedBy) expect(counted).not.toContain(p.editedBy);
        }
      }
      // Never a lost quorum: a proposal with all its approvals is no longer pending.
      const givers = p.approvals.given.map((g) => g.by);
      expect(new Set(givers).size).toBe(givers.length);
      if (p.approvals.required > 1 && p.status === 'pending')
        expect(givers.length).toBeLessThan(p.approvals.required);
      if (p.approvals.required > 1)
        expect(events.filter((e) => e.step === 'claimed').length).toBeLessThanOrEqual(1);
      const expectedStep: Record<string, string> = {
        declined: 'declined',
        superseded: 'edited',
        expired: 'expired',
      };
      const steps = events.map((e) => e.step);
      // A pending proposal past its expiry reads expired before the sweep stores (and audits) it.
      const unswept = p.status === 'expired' && !steps.includes('expired');
      if (unswept) expect(p.expiresAt.getTime()).toBeLessThanOrEqual(real.clock.now());
      else if (expectedStep[p.status]) expect(steps).toContain(expectedStep[p.status]);
      if (p.outcome) expect(events.map((e) => e.step)).toContain('outcome');
    }
  }
  expect((await verifyAudit(real.store)).kind).toBe('intact');
}

type Cmd = fc.AsyncCommand<Model, Real>;

/** What the random histories reached, so the test proves it exercised the lifecycle. */
const reached = { proposed: 0, claimed: 0, partial: 0, quorumClaimed: 0, outcomes: new Set<string>() };

class Propose implements Cmd {
  constructor(
    readonly tenant: (typeof TENANTS)[number],
    readonly which: number,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const req = REQUESTS[this.which]!;
    const result = await r.engine.proposals.propose({
      ...req,
      tenant: this.tenant,
      requestedBy: agent(this.tenant).id,
      runId: `run-${this.tenant}`,
    });
    if (result.kind === 'proposed') reached.proposed++;
    if (result.kind === 'proposed')
      m.proposals.push({ id: result.proposal.id, tenant: this.tenant, digest: result.proposal.digest });
    await checkInvariants(r);
  }
  toString = () => `propose(${this.tenant}, ${this.which})`;
}

class Approve implements Cmd {
  constructor(
    readonly index: number,
    readonly rightDigest: boolean,
    readonly crossTenant: boolean,
    readonly who: (typeof APPROVERS)[number] = 'ada',
  ) {}
  check = (m: Readonly<Model>) => m.proposals.length > 0;
  async run(m: Model, r: Real) {
    const p = m.proposals[this.index % m.proposals.length]!;
    const tenant = this.crossTenant ? TENANTS.find((t) => t !== p.tenant)! : p.tenant;
    const before = await r.engine.proposals.get(p.tenant, p.id);
    const result = await r.engine.proposals.approve({
      tenant,
      proposalId: p.id,
      approver: approver(tenant, this.who),
      seenDigest: this.rightDigest ? p.digest : 'e'.repeat(64),
    });
    if (this.crossTenant) expect(result).toMatchObject({ kind: 'not_approvable', reason: 'not_found' });
    if (result.kind === 'claimed') {
      expect(this.rightDigest && !this.crossTenant).toBe(true);
      m.contracts.push(result.contract);
      reached.claimed++;
      if ((before?.approvals.required ?? 1) > 1) {
        reached.quorumClaimed++;
        // The claiming approval is the one that completed the quorum, by someone new.
        expect(before?.approvals.given.map((g) => g.by)).not.toContain(approver(tenant, this.who).id);
        expect((before?.approvals.given.length ?? 0) + 1).toBe(before?.approvals.required);
      }
    }
    if (result.kind === 'awaiting_approvals') {
      reached.partial++;
      expect(result.given.map((g) => g.by)).toContain(approver(tenant, this.who).id);
      expect(result.given.length).toBe((before?.approvals.given.length ?? 0) + 1);
      expect(result.given.length).toBeLessThan(result.required);
    }
    // The same person never counts twice.
    if (
      before?.approvals.given.some((g) => g.by === approver(tenant, this.who).id) &&
      before.status === 'pending'
    )
      expect(result).toMatchObject({ kind: 'not_approvable' });
    await checkInvariants(r);
  }
  toString = () =>
    `approve(${this.index}, digest=${this.rightDigest}, cross=${this.crossTenant}, ${this.who})`;
}

/** Two approvers in turn (bob, then carol): completes a quorum whenever the proposal is still open. */
class ApproveByTwo implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.proposals.length > 0;
  async run(m: Model, r: Real) {
    for (const who of ['bob', 'carol'] as const) await new Approve(this.index, true, false, who).run(m, r);
  }
  toString = () => `approveByTwo(${this.index})`;
}

class Execute implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.contracts.length > 0;
  async run(m: Model, r: Real) {
    const contract = m.contracts[this.index % m.contracts.length]!;
    const outcome = await r.engine.proposals.execute(contract).catch((e: unknown) => {
      if (!(e instanceof Error && e.name === 'FencedAttemptError')) throw e;
    });
    if (outcome) reached.outcomes.add(outcome.kind);
    await checkInvariants(r);
  }
  toString = () => `execute(${this.index})`;
}

class Decline implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.proposals.length > 0;
  async run(m: Model, r: Real) {
    const p = m.proposals[this.index % m.proposals.length]!;
    await r.engine.proposals.decline({ tenant: p.tenant, proposalId: p.id, actor: approver(p.tenant) });
    await checkInvariants(r);
  }
  toString = () => `decline(${this.index})`;
}

class Edit implements Cmd {
  constructor(
    readonly index: number,
    readonly subject: string,
  ) {}
  check = (m: Readonly<Model>) => m.proposals.length > 0;
  async run(m: Model, r: Real) {
    const p = m.proposals[this.index % m.proposals.length]!;
    const result = await r.engine.proposals.edit({
      tenant: p.tenant,
      proposalId: p.id,
      editor: approver(p.tenant),
      changes: { subject: this.subject },
    });
    if (result.kind === 'edited')
      m.proposals.push({ id: result.proposal.id, tenant: p.tenant, digest: result.proposal.digest });
    await checkInvariants(r);
  }
  toString = () => `edit(${this.index})`;
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check = () => true;
  async run(_m: Model, r: Real) {
    r.clock.advance(this.ms);
    if (this.ms % 2 === 0) await r.engine.sweeps.expireDue();
    await checkInvariants(r);
  }
  toString = () => `advance(${this.ms})`;
}

class LoseNextResponse implements Cmd {
  check = () => true;
  async run(_m: Model, r: Real) {
    r.world.provider.failWhen(() => true, 'timeout_after_commit');
  }
  toString = () => 'loseNextResponse()';
}

class Reconcile implements Cmd {
  constructor(readonly index: number) {}
  check = (m: Readonly<Model>) => m.proposals.length > 0;
  async run(m: Model, r: Real) {
    const p = m.proposals[this.index % m.proposals.length]!;
    await r.engine.proposals.reconcile({ tenant: p.tenant, proposalId: p.id, actor: approver(p.tenant) });
    await checkInvariants(r);
  }
  toString = () => `reconcile(${this.index})`;
}

describe.each(BACKENDS)('the lifecycle as a model (fast-check commands) on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  it('holds its promises after every step of random histories', async () => {
    // Counted per backend: each must reach the lifecycle on its own.
    Object.assign(reached, { proposed: 0, claimed: 0, partial: 0, quorumClaimed: 0 });
    reached.outcomes.clear();
    const index = fc.nat(20);
    const commands = [
      fc.tuple(fc.constantFrom(...TENANTS), fc.nat(REQUESTS.length - 1)).map(([t, w]) => new Propose(t, w)),
      fc
        .tuple(index, fc.nat(9), fc.constantFrom(...APPROVERS))
        .map(([i, roll, who]) => new Approve(i, roll !== 0, roll === 1, who)),
      index.map((i) => new ApproveByTwo(i)),
      index.map((i) => new Execute(i)),
      index.map((i) => new Decline(i)),
      fc.tuple(index, fc.string({ minLength: 1, maxLength: 20 })).map(([i, s]) => new Edit(i, s)),
      fc.integer({ min: 1, max: 40 * 60_000 }).map((ms) => new Advance(ms)),
      fc.constant(new LoseNextResponse()),
      index.map((i) => new Reconcile(i)),
    ];
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: '+1' }), async (cmds) => {
        const world = demoWorld();
        const { store, dispose } = await storeOn(backend);
        const clock = new ManualClock();
        const engine = await createEngine({ store, operations: demoOperations(world), clock });
        try {
          await fc.asyncModelRun(
            () => ({ model: { proposals: [], contracts: [] }, real: { engine, store, world, clock } }),
            cmds,
          );
        } finally {
          await engine.close();
          await dispose();
        }
      }),
      { numRuns: 60 },
    );
    expect(reached.proposed).toBeGreaterThan(20);
    expect(reached.claimed).toBeGreaterThan(5);
    expect(reached.partial).toBeGreaterThan(2);
    expect(reached.quorumClaimed).toBeGreaterThan(0);
    expect([...reached.outcomes]).toEqual(expect.arrayContaining(['succeeded', 'needs_reconciliation']));
    // 60 histories, each on a freshly migrated store: on PostgreSQL that is 60 schemas.
  }, 180_000);
});
