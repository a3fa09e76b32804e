import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { defineReadTool } from '../../src/index.js';
import { AuditBudget } from '../../src/engine/audit-budget.js';
import { agent, approver, type Harness, harness, proposePayment, viewer } from '../support/engine.js';

describe('audited refusals and reads are bounded per principal', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('a flood of refused approvals is audited up to the budget, then answered rate_limited with nothing written', async () => {
    h = await harness({ auditedLimits: { refusalsPerMinute: 5 } });
    const p = await proposePayment(h.engine);
    const attempt = () =>
      h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: p.id,
        approver: viewer(),
        seenDigest: p.digest,
      });
    const answers = [];
    for (let i = 0; i < 40; i++) answers.push(await attempt());
    expect(answers.slice(0, 5).map((a) => a.kind === 'not_approvable' && a.reason)).toEqual(
      Array(5).fill('forbidden'),
    );
    for (const a of answers.slice(5)) {
      expect(a).toMatchObject({ kind: 'not_approvable', reason: 'rate_limited' });
      expect(a.kind === 'not_approvable' && a.retryAfterMs).toBe(60_000);
    }
    const denied = () =>
      h.engine.audit.events('acme', p.id).then((e) => e.filter((x) => x.step === 'denied'));
    expect(await denied()).toHaveLength(5);
    // The refused principal is told when its window frees; an approver is never held by its budget.
    h.clock.advance(30_000);
    const other = await attempt();
    expect(other.kind === 'not_approvable' && other.retryAfterMs).toBe(30_000);
    const real = await h.engine.proposals.approve({
      tenant: 'acme',
      proposalId: p.id,
      approver: approver(),
      seenDigest: p.digest,
    });
    expect(real.kind).toBe('claimed');
    // The window frees after a minute.
    h.clock.advance(30_000);
    const again = await attempt();
    expect(again).toMatchObject({ kind: 'not_approvable', reason: 'forbidden' });
    expect(await denied()).toHaveLength(6);
  });

  it('refused declines draw on the same budget', async () => {
    h = await harness({ auditedLimits: { refusalsPerMinute: 2 } });
    const p = await proposePayment(h.engine);
    const reasons = [];
    for (let i = 0; i < 4; i++) {
      const r = await h.engine.proposals.decline({ tenant: 'acme', proposalId: p.id, actor: viewer() });
      reasons.push(r.kind === 'not_declinable' ? r.reason : r.kind);
    }
    expect(reasons).toEqual(['forbidden', 'forbidden', 'rate_limited', 'rate_limited']);
    expect((await h.engine.audit.events('acme', p.id)).filter((e) => e.step === 'denied')).toHaveLength(2);
  });

  it('an agent past its read budget is refused before the tool runs, and the read is not audited', async () => {
    let calls = 0;
    const counter = defineReadTool({
      name: 'count_calls',
      description: 'Counts its calls.',
      input: z.strictObject({}),
      read: () => {
        calls += 1;
        return { calls };
      },
    });
    h = await harness({ readTools: [counter], auditedLimits: { readsPerMinute: 3 } });
    const binding = { tenant: 'acme', agent: agent().id, runId: 'run-1' };
    const results = [];
    for (let i = 0; i < 5; i++) results.push(await h.engine.reads.run('count_calls', {}, binding));
    expect(results.map((r) => r.kind)).toEqual(['read', 'read', 'read', 'rate_limited', 'rate_limited']);
    expect(results[3]).toMatchObject({ reason: 'rate_limited', limit: 'agent_reads', retryAfterMs: 60_000 });
    expect(calls).toBe(3);
    const reads = await h.engine.audit.since('acme', { afterSeq: 0, limit: 100 });
    expect(reads.events.filter((e) => e.step === 'read')).toHaveLength(3);
    // Another agent reads on.
    const other = await h.engine.reads.run('count_calls', {}, { ...binding, agent: 'agent:acme-other' });
    expect(other.kind).toBe('read');
  });

  it('the defaults are 60 refusals and 120 reads a minute; false lifts them; a bad limit is refused at start', async () => {
    const budget = new AuditBudget({ refusalsPerMinute: 60, readsPerMinute: 120 });
    const taken = Array.from({ length: 61 }, () => budget.take('refusal', 'acme', 'user:x', 0).kind);
    expect(taken.filter((k) => k === 'ok')).toHaveLength(60);
    expect(taken.at(-1)).toBe('rate_limited');
    h = await harness({ auditedLimits: false });
    const p = await proposePayment(h.engine);
    for (let i = 0; i < 70; i++)
      await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: p.id,
        approver: viewer(),
        seenDigest: p.digest,
      });
    expect((await h.engine.audit.events('acme', p.id)).filter((e) => e.step === 'denied')).toHaveLength(70);
    await expect(harness({ auditedLimits: { readsPerMinute: 0 } })).rejects.toThrow(
      /limits.audited.readsPerMinute/,
    );
  });
});
