import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type DemoWorld, demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import type { AnyOperation } from '../../src/index.js';
import type { Reconciliation } from '../../src/operation/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import {
  approver,
  claimProposal,
  type Harness,
  harnessOn,
  proposePayment,
  stallAt,
} from '../support/engine.js';

const LEASE = 60_000;
const FIRST = 10_000;

/** The demo operations, with invoice.pay declared not deduplicating (so a stopped attempt goes to reconciliation) and its reconcile replaced when given. */
function operationsOf(
  world: DemoWorld,
  reconcile?: (attempt: { readonly idempotencyKey: string }) => Promise<Reconciliation<unknown>>,
): AnyOperation[] {
  return demoOperations(world).map((op) =>
    op.kind === 'invoice.pay'
      ? { ...op, provider: { deduplicates: 'none' as const }, ...(reconcile ? { reconcile } : {}) }
      : op,
  );
}

describe.each(BACKENDS)('automatic reconciliation, on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** An invoice payment whose worker stopped at `point`, taken over by recovery into needs_reconciliation. */
  async function leftForReconciliation(
    point: 'before_provider_call' | 'after_provider_accepted',
    reconcile?: Parameters<typeof operationsOf>[1],
  ) {
    const stall = stallAt(point);
    const world = demoWorld();
    h = await harnessOn(backend, {
      leaseMs: LEASE,
      faults: stall.hook,
      world,
      operations: operationsOf(world, reconcile),
      reconcileBackoff: { firstMs: FIRST, maxMs: 40_000 },
    });
    const proposal = await proposePayment(h.engine);
    void h.engine.proposals.execute(await claimProposal(h.engine, proposal));
    await stall.reached;
    h.clock.advance(LEASE + 1);
    expect(await h.engine.sweeps.recover()).toMatchObject({ examined: 1, toReconciliation: 1 });
    expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('needs_reconciliation');
    return { proposal, world };
  }

  it.each([
    ['before_provider_call', 0, 'terminal_failure'],
    ['after_provider_accepted', 1, 'succeeded'],
  ] as const)(
    'a worker stopped at %s (%i payments) is reconciled by the sweep once its first try is due, as system:reconciliation',
    async (point, payments, final) => {
      const { proposal, world } = await leftForReconciliation(point);
      h!.clock.advance(FIRST - 1);
      expect(await h!.engine.sweeps.reconcileDue()).toEqual({
        examined: 0,
        reconciled: 0,
        stillPending: 0,
        refused: 0,
        skipped: 0,
      });
      h!.clock.advance(2);
      expect(await h!.engine.sweeps.reconcileDue()).toMatchObject({ examined: 1, reconciled: 1 });
      expect((await h!.engine.proposals.get('acme', proposal.id))?.status).toBe(final);
      expect(world.provider.payments).toHaveLength(payments);
      const reconciled = (await h!.engine.audit.events('acme', proposal.id)).find(
        (e) => e.step === 'reconciled',
      );
      expect(reconciled?.actor).toBe('system:reconciliation');
      // Closed: nothing is due any more.
      h!.clock.advance(LEASE * 10);
      expect(await h!.engine.sweeps.reconcileDue()).toMatchObject({ examined: 0 });
    },
  );

  it('a provider that does not know yet is asked again on the backoff (after 10s, then as long again as it waited, at most 40s), one server per try', async () => {
    const tries: number[] = [];
    const { proposal, world } = await leftForReconciliation('after_provider_accepted', async (attempt) => {
      tries.push(h!.clock.now());
      if (tries.length < 5) return { kind: 'pending' };
      const payment = await world.provider.lookup(attempt.idempotencyKey);
      return payment
        ? { kind: 'succeeded', result: { payment_id: payment.paymentId } }
        : { kind: 'not_found', message: 'no payment' };
    });
    const left = h!.clock.now();
    // Two servers sweep every second for 130 seconds.
    for (let second = 1; second <= 130; second++) {
      h!.clock.time = left + second * 1_000;
      const [a, b] = await Promise.all([h!.engine.sweeps.reconcileDue(), h!.engine.sweeps.reconcileDue()]);
      expect(a.stillPending + a.reconciled + b.stillPending + b.reconciled).toBeLessThanOrEqual(1);
    }
    // Due strictly after 10s; then waits of 11s, 23s, 40s (the cap), 40s.
    expect(tries.map((t) => t - left)).toEqual([11_000, 23_000, 47_000, 88_000, 129_000]);
    expect((await h!.engine.proposals.get('acme', proposal.id))?.status).toBe('succeeded');
  });

  it('an operator can still reconcile by hand before the first try; the sweep then finds nothing', async () => {
    const { proposal } = await leftForReconciliation('after_provider_accepted');
    const manual = await h!.engine.proposals.reconcile({
      tenant: 'acme',
      proposalId: proposal.id,
      actor: approver(),
    });
    expect(manual).toMatchObject({ kind: 'reconciled', outcome: { kind: 'succeeded' } });
    h!.clock.advance(FIRST + 1);
    expect(await h!.engine.sweeps.reconcileDue()).toMatchObject({ examined: 0 });
  });
});
