import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { demoWorld } from '../../src/demo/demo-world.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import {
  approver,
  claimProposal,
  draftRows,
  type Harness,
  harnessOn,
  proposeDraft,
  proposePayment,
  stallAt,
  undeclaredOperations,
} from '../support/engine.js';

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const LEASE = 60_000;

  describe('recovery after a worker stops mid-attempt', () => {
    it('a worker past its lease still commits once when no sweep took over; a later sweep finds nothing', async () => {
      const stall = stallAt('before_outcome_commit');
      h = await harnessOn(backend, { leaseMs: LEASE, faults: stall.hook });
      const proposal = await proposeDraft(h.engine);
      const contract = await claimProposal(h.engine, proposal);
      // The worker holds its transaction open at the stall, so no sweep can run meanwhile; released
      // after its lease, it still commits, since nothing took its attempt over.
      const first = h.engine.proposals.execute(contract);
      await stall.reached;
      h.clock.advance(LEASE + 1);
      stall.release();
      await first;
      expect(await h.engine.sweeps.recover()).toMatchObject({ examined: 0 });
      const rows = await draftRows(h.store);
      expect(rows).toHaveLength(1);
    });

    it('a local attempt claimed and never executed is re-run by the sweep, only after its lease', async () => {
      h = await harnessOn(backend, { leaseMs: LEASE });
      const proposal = await proposeDraft(h.engine);
      const claimed = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(claimed.kind).toBe('claimed');
      h.clock.advance(LEASE - 1);
      expect(await h.engine.sweeps.recover()).toEqual({
        examined: 0,
        rerun: 0,
        resent: 0,
        toReconciliation: 0,
        parked: 0,
        skipped: 0,
        held: 0,
        chained: 0,
      });
      h.clock.advance(2);
      const [a, b] = await Promise.all([h.engine.sweeps.recover(), h.engine.sweeps.recover()]);
      expect(a!.rerun + b!.rerun).toBe(1);
      const stored = await h.engine.proposals.get('acme', proposal.id);
      expect(stored?.status).toBe('succeeded');
      expect(stored?.attempts).toBe(2);
      expect(await draftRows(h.store)).toHaveLength(1);
      // The original worker, waking now, is fenced and changes nothing.
      if (claimed.kind === 'claimed')
        expect(await h.engine.proposals.execute(claimed.contract)).toEqual(stored?.outcome);
      expect(await draftRows(h.store)).toHaveLength(1);
      const steps = (await h.engine.audit.events('acme', proposal.id)).map((e) => e.step);
      expect(steps.filter((s) => s === 'claimed')).toHaveLength(2);
    });

    it.each([
      ['before_provider_call', 0, 'terminal_failure'],
      ['after_provider_accepted', 1, 'succeeded'],
    ] as const)(
      'an external worker stopped at %s ends needs_reconciliation, then reconciles (%i provider calls)',
      async (point, calls, final) => {
        const stall = stallAt(point);
        const world = demoWorld();
        // A provider that does not deduplicate: see resend.integration.test.ts for one that does.
        h = await harnessOn(backend, {
          leaseMs: LEASE,
          faults: stall.hook,
          world,
          operations: undeclaredOperations(world),
        });
        const proposal = await proposePayment(h.engine);
        const contract = await claimProposal(h.engine, proposal);
        void h.engine.proposals.execute(contract);
        await stall.reached;
        h.clock.advance(LEASE + 1);
        expect(await h.engine.sweeps.recover()).toMatchObject({ examined: 1, toReconciliation: 1, rerun: 0 });
        expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('needs_reconciliation');
        expect(world.provider.calls).toBe(calls);
        const reconciled = await h.engine.proposals.reconcile({
          tenant: 'acme',
          proposalId: proposal.id,
          actor: approver(),
        });
        expect(reconciled.kind === 'reconciled' && reconciled.outcome.kind).toBe(final);
        expect(world.provider.calls).toBe(calls);
      },
    );

    it('an external worker woken after a sweep sent its attempt to reconciliation never calls the provider', async () => {
      const stall = stallAt('before_provider_call');
      const world = demoWorld();
      h = await harnessOn(backend, {
        leaseMs: LEASE,
        faults: stall.hook,
        world,
        operations: undeclaredOperations(world),
      });
      const proposal = await proposePayment(h.engine);
      const contract = await claimProposal(h.engine, proposal);
      const worker = h.engine.proposals.execute(contract);
      await stall.reached;
      h.clock.advance(LEASE + 1);
      expect(await h.engine.sweeps.recover()).toMatchObject({ examined: 1, toReconciliation: 1 });
      stall.release();
      expect(await worker).toMatchObject({ kind: 'needs_reconciliation' });
      expect(world.provider.calls).toBe(0);
      expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('needs_reconciliation');
    });

    it.each([
      ['young (under half the lease)', LEASE / 2 - 1, LEASE],
      ['past half the lease', LEASE / 2 + 1, LEASE / 2 + 1 + LEASE],
    ] as const)(
      'an external worker whose lease is %s calls the provider once; the fence renews it only when it may have lapsed',
      async (_, pause, leaseLeft) => {
        const stall = stallAt('before_provider_call');
        const world = demoWorld();
        h = await harnessOn(backend, { leaseMs: LEASE, faults: stall.hook, world });
        const proposal = await proposePayment(h.engine);
        const contract = await claimProposal(h.engine, proposal);
        const start = h.clock.now();
        const worker = h.engine.proposals.execute(contract);
        await stall.reached;
        h.clock.advance(pause);
        stall.release();
        expect(await worker).toMatchObject({ kind: 'succeeded' });
        expect(world.provider.calls).toBe(1);
        const [attempt] = await h.store.read((tx) => tx.listAttempts('acme', proposal.id));
        // The command's renewal (at start) or the fence's (after the pause) is the last lease written.
        expect(attempt?.leaseUntil).toBe(start + leaseLeft);
      },
    );

    it('an external attempt with no command yet is re-run: the provider never heard of it', async () => {
      const world = demoWorld();
      h = await harnessOn(backend, { leaseMs: LEASE, world });
      const proposal = await proposePayment(h.engine);
      const claimed = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(claimed.kind).toBe('claimed');
      h.clock.advance(LEASE + 1);
      expect(await h.engine.sweeps.recover()).toMatchObject({ rerun: 1 });
      expect(world.provider.calls).toBe(1);
      expect(world.provider.payments[0]?.idempotencyKey).toBe(`${proposal.id}.2`);
      expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('succeeded');
    });

    it('parks a proposal after maxAttempts instead of looping', async () => {
      h = await harnessOn(backend, { leaseMs: LEASE });
      const proposal = await proposeDraft(h.engine);
      await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      h.clock.advance(LEASE + 1);
      expect(await h.engine.sweeps.recover({ maxAttempts: 1 })).toMatchObject({ parked: 1 });
      const stored = await h.engine.proposals.get('acme', proposal.id);
      expect(stored?.outcome).toMatchObject({
        kind: 'terminal_failure',
        message: 'recovery gave up after 1 attempts; nothing was committed or sent',
      });
      expect(await h.engine.sweeps.recover({ maxAttempts: 1 })).toMatchObject({ examined: 0 });
    });
  });
});
