import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type Actor,
  ConfigurationError,
  createEngine,
  defineOperation,
  type Engine,
  type EngineOptions,
  type ProposeResult,
  type Store,
} from '../../src/index.js';
import { DEFAULT_PROPOSAL_LIMITS } from '../../src/engine/index.js';
import { memoryLogger } from '../server/support/server-harness.js';
import { BACKENDS, type Backend, type BackendName, createBackend } from '../support/backends.js';
import { ManualClock } from '../support/engine.js';

// A local operation with nothing to look up, so a test can propose dozens quickly.
const note = defineOperation({
  kind: 'quota.note',
  scopeVersion: 1,
  scope: z.strictObject({ tenant: z.string(), operation: z.literal('quota.note'), target: z.string() }),
  request: z.strictObject({ target: z.string() }),
  arguments: z.strictObject({ target: z.string() }),
  prepare: async (r) => ({ arguments: { target: r.target }, preview: { title: `Note on ${r.target}` } }),
  effect: 'local',
  execute: async () => ({ ok: true }),
});

const ada: Actor = { id: 'user:ada@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] };

interface Lab {
  readonly backend: Backend;
  readonly clock: ManualClock;
  readonly logs: { level: string; fields: object; message: string }[];
  readonly stores: Store[];
  engine(options?: Partial<EngineOptions>): Promise<Engine>;
}

let labs: Lab[] = [];
afterEach(async () => {
  for (const lab of labs) {
    for (const store of lab.stores) await store.close();
    await lab.backend.dispose();
  }
  labs = [];
});

async function openLab(name: BackendName): Promise<Lab> {
  const backend = await createBackend(name);
  const clock = new ManualClock();
  const logs: Lab['logs'] = [];
  const stores: Store[] = [];
  const lab: Lab = {
    backend,
    clock,
    logs,
    stores,
    // Each engine opens its own store on the same database: another process, as far as quotas know.
    engine: async (options = {}) => {
      const store = await backend.open();
      stores.push(store);
      return createEngine({ store, operations: [note], clock, logger: memoryLogger(logs), ...options });
    },
  };
  labs.push(lab);
  return lab;
}

let counter = 0;
function proposeAs(engine: Engine, agentId: string, tenant = 'acme'): Promise<ProposeResult> {
  const target = `t-${++counter}`;
  return engine.proposals.propose({
    operation: 'quota.note',
    request: { target },
    tenant,
    resource: `note:${target}`,
    requestedBy: agentId,
    runId: 'run-quota',
  });
}

async function proposeMany(engine: Engine, agentId: string, n: number, tenant = 'acme') {
  const results: ProposeResult[] = [];
  for (let i = 0; i < n; i++) results.push(await proposeAs(engine, agentId, tenant));
  return results;
}

async function pendingCount(engine: Engine, tenant = 'acme'): Promise<number> {
  return (await engine.proposals.list(tenant, { status: 'pending', limit: 200 })).items.length;
}

for (const name of BACKENDS) {
  describe(`proposal quotas on ${name}`, () => {
    it('an agent over its pending quota gets rate_limited with a retry-after; nothing is stored or audited; another agent of the tenant still proposes', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine({ limits: { perAgent: { pending: 3 } } });
      const made = await proposeMany(engine, 'agent:spam', 3);
      expect(made.map((r) => r.kind)).toEqual(['proposed', 'proposed', 'proposed']);

      const refused = await proposeAs(engine, 'agent:spam');
      expect(refused).toEqual({
        kind: 'rate_limited',
        reason: 'rate_limited',
        limit: 'agent_pending',
        retryAfterMs: 60_000,
        modelMessage: expect.stringContaining('wait at least 60 s'),
      });
      expect(await pendingCount(engine)).toBe(3);
      const audited = await Promise.all(
        (await engine.proposals.list('acme', { limit: 10 })).items.map((p) =>
          engine.audit.events('acme', p.id),
        ),
      );
      expect(audited.flat().map((line) => line.step)).toEqual(['proposed', 'proposed', 'proposed']);
      expect(lab.logs.filter((l) => l.message === 'proposal refused: rate limited')).toEqual([
        {
          level: 'warn',
          message: 'proposal refused: rate limited',
          fields: {
            tenant: 'acme',
            requestedBy: 'agent:spam',
            reason: 'rate_limited',
            limit: 'agent_pending',
            retryAfterMs: 60_000,
          },
        },
      ]);

      expect((await proposeAs(engine, 'agent:honest')).kind).toBe('proposed');
      expect((await proposeAs(engine, 'agent:spam', 'globex')).kind).toBe('proposed');
    });

    it('a decided proposal frees a pending slot', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine({ limits: { perAgent: { pending: 2 } } });
      const [first] = await proposeMany(engine, 'agent:a', 2);
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('rate_limited');
      if (first?.kind !== 'proposed') throw new Error('fixture');
      const declined = await engine.proposals.decline({
        tenant: 'acme',
        proposalId: first.proposal.id,
        actor: ada,
      });
      expect(declined.kind).toBe('declined');
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('proposed');
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('rate_limited');
    });

    it('a proposal past its expiry frees its pending slot even before the sweep', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine({ limits: { perAgent: { pending: 2, proposalsPerMinute: 100 } } });
      await proposeMany(engine, 'agent:a', 2);
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('rate_limited');
      lab.clock.advance(2 * 60 * 60_000);
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('proposed');
    });

    it('the tenant cap holds across agents', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine({ limits: { perTenant: { pending: 4 } } });
      for (const agentId of ['agent:a', 'agent:b', 'agent:c', 'agent:d'])
        expect((await proposeAs(engine, agentId)).kind).toBe('proposed');
      const refused = await proposeAs(engine, 'agent:e');
      expect(refused).toMatchObject({
        kind: 'rate_limited',
        reason: 'rate_limited',
        limit: 'tenant_pending',
      });
      if (refused.kind !== 'rate_limited') throw new Error('unreachable');
      expect(refused.modelMessage).toContain('This workspace has 4 proposals waiting');
      expect((await proposeAs(engine, 'agent:e', 'globex')).kind).toBe('proposed');
    });

    it('the rate window refuses with the time until its oldest proposal leaves it, then recovers', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine({ limits: { perAgent: { proposalsPerMinute: 3 } } });
      for (let i = 0; i < 3; i++) {
        expect((await proposeAs(engine, 'agent:a')).kind).toBe('proposed');
        lab.clock.advance(10_000);
      }
      // The oldest of the three was made 30 s ago: it leaves the 60 s window in 30 s.
      const refused = await proposeAs(engine, 'agent:a');
      expect(refused).toMatchObject({ kind: 'rate_limited', limit: 'agent_rate', retryAfterMs: 30_000 });
      if (refused.kind !== 'rate_limited') throw new Error('unreachable');
      expect(refused.modelMessage).toContain('Wait 30 s');
      expect((await proposeAs(engine, 'agent:b')).kind).toBe('proposed');
      lab.clock.advance(29_999);
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('rate_limited');
      lab.clock.advance(1);
      expect((await proposeAs(engine, 'agent:a')).kind).toBe('proposed');
    });

    it('a concurrent burst cannot pass the check all at once', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine({ limits: { perAgent: { pending: 5 } } });
      const results = await Promise.all(Array.from({ length: 40 }, () => proposeAs(engine, 'agent:burst')));
      expect(results.filter((r) => r.kind === 'proposed')).toHaveLength(5);
      expect(results.filter((r) => r.kind === 'rate_limited')).toHaveLength(35);
      expect(await pendingCount(engine)).toBe(5);
      // Nothing is left reserved: the next proposal is refused by the stored count, not a leak.
      expect(await proposeAs(engine, 'agent:burst')).toMatchObject({ limit: 'agent_pending' });
    });

    it('counts come from the store: a second engine on the same database sees the first one’s proposals', async () => {
      const lab = await openLab(name);
      const limits = { perAgent: { pending: 2 } };
      const one = await lab.engine({ limits });
      const two = await lab.engine({ limits });
      await proposeMany(one, 'agent:a', 2);
      expect(await proposeAs(two, 'agent:a')).toMatchObject({ kind: 'rate_limited', limit: 'agent_pending' });
    });

    it('defaults are on: 30 a minute and 50 pending per agent', async () => {
      const lab = await openLab(name);
      const engine = await lab.engine();
      expect(engine.limits).toEqual(DEFAULT_PROPOSAL_LIMITS);
      const burst = await proposeMany(engine, 'agent:a', 31);
      expect(burst.slice(0, 30).every((r) => r.kind === 'proposed')).toBe(true);
      expect(burst[30]).toMatchObject({ kind: 'rate_limited', limit: 'agent_rate', retryAfterMs: 60_000 });
      lab.clock.advance(60_000);
      const more = await proposeMany(engine, 'agent:a', 21);
      expect(more.slice(0, 20).every((r) => r.kind === 'proposed')).toBe(true);
      expect(more[20]).toMatchObject({ kind: 'rate_limited', limit: 'agent_pending' });
    });
  });
}

describe('proposal quota configuration', () => {
  it('limits: false turns quotas off; one level can be off while the other holds', async () => {
    const lab = await openLab('sqlite');
    const off = await lab.engine({ limits: false });
    expect(off.limits).toEqual({ perAgent: false, perTenant: false });
    expect((await proposeMany(off, 'agent:a', 35)).every((r) => r.kind === 'proposed')).toBe(true);
    const tenantOnly = await lab.engine({ limits: { perAgent: false, perTenant: { pending: 36 } } });
    expect(tenantOnly.limits).toEqual({
      perAgent: false,
      perTenant: { proposalsPerMinute: 300, pending: 36 },
    });
    expect((await proposeAs(tenantOnly, 'agent:a')).kind).toBe('proposed');
    expect(await proposeAs(tenantOnly, 'agent:a')).toMatchObject({ limit: 'tenant_pending' });
  });

  it('refuses a limit that is not a positive whole number (Infinity lifts one field)', async () => {
    const lab = await openLab('sqlite');
    for (const pending of [0, -1, 1.5, Number.NaN])
      await expect(lab.engine({ limits: { perAgent: { pending } } })).rejects.toThrow(ConfigurationError);
    const lifted = await lab.engine({
      limits: { perAgent: { proposalsPerMinute: Number.POSITIVE_INFINITY } },
    });
    expect(lifted.limits.perAgent).toEqual({ proposalsPerMinute: Number.POSITIVE_INFINITY, pending: 50 });
  });
});
