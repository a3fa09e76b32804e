import { beforeAll, afterEach, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { agent, approver, type Harness, harnessOn } from '../support/engine.js';

// Issue 10, hole 14: the example refund refunded the same missed discount again on every
// approved proposal (3 × 27.00 USD for one discount). The order book now records each discount's
// refund: prepare refuses a known one, revalidate revises a proposal another one overtook, and
// execute claims the discount before calling the provider.

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const REFUND = { order_id: 'ord-81', line_item_id: 'line-1', discount_id: 'disc-sibling' };

  async function proposeRefund(engine: Engine, tenant = 'acme') {
    return engine.proposals.propose({
      operation: 'order.refund_missing_discount',
      request: REFUND,
      tenant,
      resource: 'order:ord-81',
      requestedBy: agent(tenant).id,
      runId: 'run-refund',
    });
  }

  async function pendingRefund(engine: Engine, tenant = 'acme') {
    const r = await proposeRefund(engine, tenant);
    if (r.kind !== 'proposed') throw new Error(r.modelMessage);
    return r.proposal;
  }

  async function approveAndRun(engine: Engine, proposal: { id: string; digest: string }, tenant = 'acme') {
    const r = await engine.proposals.approveAndExecute({
      tenant,
      proposalId: proposal.id,
      approver: approver(tenant),
      seenDigest: proposal.digest,
    });
    if (r.kind !== 'completed') throw new Error(`expected completed, got ${r.kind}`);
    return r.outcome;
  }

  const refundsOf = (hh: Harness<Store>) =>
    hh.world.provider.payments.filter((p) => p.reference === 'refund:ord-81:disc-sibling');

  describe('order.refund_missing_discount refunds one missed discount once', () => {
    it('three proposals for one discount: one refund of 27.00 USD, the other two revision_required', async () => {
      h = await harnessOn(backend);
      const proposals = [
        await pendingRefund(h.engine),
        await pendingRefund(h.engine),
        await pendingRefund(h.engine),
      ];
      const outcomes = [];
      for (const p of proposals) outcomes.push(await approveAndRun(h.engine, p));
      expect(outcomes[0]?.kind).toBe('succeeded');
      for (const outcome of outcomes.slice(1)) {
        expect(outcome).toEqual({
          kind: 'revision_required',
          reason: 'Discount disc-sibling on order ord-81 was already refunded (27.00 USD).',
        });
      }
      expect(refundsOf(h)).toMatchObject([{ amount_minor: 2_700, currency: 'USD' }]);
      expect(h.world.provider.calls).toBe(1);
      expect(h.world.orders.find('acme', 'ord-81')?.refundedMinor).toBe(2_700);
    });

    it('a fourth proposal after the refund is refused at prepare with safe text', async () => {
      h = await harnessOn(backend);
      await approveAndRun(h.engine, await pendingRefund(h.engine));
      const again = await proposeRefund(h.engine);
      expect(again).toMatchObject({
        kind: 'invalid_request',
        modelMessage: 'Discount disc-sibling on order ord-81 was already refunded (27.00 USD).',
      });
    });

    it('two approvals racing past revalidation: the provider is called once', async () => {
      h = await harnessOn(backend);
      const [a, b] = [await pendingRefund(h.engine), await pendingRefund(h.engine)];
      const outcomes = await Promise.all([approveAndRun(h.engine, a), approveAndRun(h.engine, b)]);
      expect(outcomes.map((o) => o.kind).sort()).toEqual(
        outcomes.some((o) => o.kind === 'revision_required')
          ? ['revision_required', 'succeeded']
          : ['succeeded', 'terminal_failure'],
      );
      expect(refundsOf(h)).toHaveLength(1);
      expect(h.world.provider.calls).toBe(1);
    });

    it('another tenant’s order of the same id keeps its own discount', async () => {
      h = await harnessOn(backend);
      await approveAndRun(h.engine, await pendingRefund(h.engine, 'acme'));
      const globex = await approveAndRun(h.engine, await pendingRefund(h.engine, 'globex'), 'globex');
      expect(globex.kind).toBe('succeeded');
    });

    it('an unconfirmed refund holds the discount until reconciliation settles it', async () => {
      h = await harnessOn(backend);
      h.world.provider.failWhen((r) => r.reference === 'refund:ord-81:disc-sibling', 'timeout_after_commit');
      const [first, second] = [await pendingRefund(h.engine), await pendingRefund(h.engine)];
      expect((await approveAndRun(h.engine, first)).kind).toBe('needs_reconciliation');
      expect(await approveAndRun(h.engine, second)).toEqual({
        kind: 'revision_required',
        reason: 'A refund of discount disc-sibling on order ord-81 (27.00 USD) is already in progress.',
      });
      const reconciled = await h.engine.proposals.reconcile({
        tenant: 'acme',
        proposalId: first.id,
        actor: approver(),
      });
      expect(reconciled).toMatchObject({ kind: 'reconciled', outcome: { kind: 'succeeded' } });
      expect(h.world.orders.find('acme', 'ord-81')?.refundedMinor).toBe(2_700);
      expect(await proposeRefund(h.engine)).toMatchObject({
        kind: 'invalid_request',
        modelMessage: 'Discount disc-sibling on order ord-81 was already refunded (27.00 USD).',
      });
      expect(refundsOf(h)).toHaveLength(1);
    });

    it('a refund the provider declined frees the discount for a new proposal', async () => {
      h = await harnessOn(backend);
      h.world.provider.failWhen((r) => r.reference === 'refund:ord-81:disc-sibling', 'decline');
      expect((await approveAndRun(h.engine, await pendingRefund(h.engine))).kind).toBe('terminal_failure');
      expect((await approveAndRun(h.engine, await pendingRefund(h.engine))).kind).toBe('succeeded');
      expect(refundsOf(h)).toHaveLength(1);
    });
  });
});
