import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { approver, claimProposal, type Harness, harnessOn, proposePayment } from '../support/engine.js';
import { call, freshInvoice, proposeViaApi, serverHarness } from '../server/support/server-harness.js';

const LEASE = 60_000;

describe.each(BACKENDS)('recovering, on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('an approval of an executing proposal is replayed while its lease is live, recovering once it ended, and answered by the outcome after the sweep', async () => {
    h = await harnessOn(backend, { leaseMs: LEASE, sweepIntervalMs: 10_000 });
    const proposal = await proposePayment(h.engine);
    // Claimed and never executed: the worker stopped right after its claim.
    await claimProposal(h.engine, proposal);
    const again = () =>
      h!.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
    h.clock.advance(LEASE);
    expect(await again()).toEqual({
      kind: 'not_approvable',
      reason: 'replayed',
      message: 'already approved and executing',
    });
    h.clock.advance(1);
    const ended = new Date(h.clock.now() - 1).toISOString();
    expect(await again()).toEqual({
      kind: 'not_approvable',
      reason: 'recovering',
      message: `already approved, but attempt 1 stopped: its lease ended at ${ended}; the next recovery sweep (every 10s) takes it over, nothing is done twice`,
      retryAfterMs: 10_000,
    });
    const audit = await h.engine.audit.events('acme', proposal.id);
    expect(audit.filter((e) => e.reason === 'recovering')).toHaveLength(1);
    expect(await h.engine.sweeps.recover()).toMatchObject({ examined: 1, rerun: 1 });
    expect(await again()).toMatchObject({ kind: 'already_completed', outcome: { kind: 'succeeded' } });
    expect(h.world.provider.payments).toHaveLength(1);
  });

  it('without a sweep interval it says the next sweep takes it over, with no retry time', async () => {
    h = await harnessOn(backend, { leaseMs: LEASE });
    const proposal = await proposePayment(h.engine);
    await claimProposal(h.engine, proposal);
    h.clock.advance(LEASE + 1);
    const refused = await h.engine.proposals.approve({
      tenant: 'acme',
      proposalId: proposal.id,
      approver: approver(),
      seenDigest: proposal.digest,
    });
    expect(refused).toMatchObject({ kind: 'not_approvable', reason: 'recovering' });
    expect(refused).not.toHaveProperty('retryAfterMs');
    expect(refused.kind === 'not_approvable' && refused.message).toMatch(
      /; the next recovery sweep takes it over,/,
    );
  });
});

describe('recovering over HTTP', () => {
  it('answers 409 recovering with Retry-After of the sweep interval, where the live lease answers 409 replayed', async () => {
    const h = await serverHarness({ recovery: { leaseMs: LEASE, sweepIntervalMs: 15_000 } });
    try {
      const invoice = freshInvoice(h.world, 'acme');
      const proposal = await proposeViaApi(h, 'acme', {
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        resource: `invoice:${invoice}`,
      });
      await claimProposal(h.engine, proposal);
      const approve = () =>
        call(h, 'POST', `/api/v1/proposals/${proposal.id}/approve`, {
          token: h.tenants.acme.operators.approver.token,
          body: { seenDigest: proposal.digest },
        });
      const live = await approve();
      expect(live.status).toBe(409);
      expect(live.body['reason']).toBe('replayed');
      expect(live.headers.get('retry-after')).toBeNull();
      h.clock.advance(LEASE + 1);
      const orphaned = await approve();
      expect(orphaned.status).toBe(409);
      expect(orphaned.body).toMatchObject({ reason: 'recovering', retryAfterSeconds: 15 });
      expect(orphaned.body['message']).toMatch(
        /^already approved, but attempt 1 stopped: its lease ended at /,
      );
      expect(orphaned.headers.get('retry-after')).toBe('15');
    } finally {
      await h.close();
    }
  });
});
