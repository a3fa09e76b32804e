import { beforeAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shortHash } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { agent, approver, type Harness, harnessOn, proposePayment, viewer } from '../support/engine.js';

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store>;
  beforeEach(async () => {
    h = await harnessOn(backend);
  });
  afterEach(async () => {
    await h.close();
  });

  describe('propose → approve → execute', () => {
    it('pays the 240.49 USD invoice exactly once, with the same short hash at every step', async () => {
      const proposal = await proposePayment(h.engine);
      expect(proposal.status).toBe('pending');
      expect(proposal.id).toMatch(/^prp_[0-9a-z]{26}$/);
      expect(proposal.arguments).toEqual({
        invoice_id: 'inv-104',
        destination_account_id: 'acct-supplier-7',
        amount_minor: 24049,
        currency: 'USD',
      });
      expect(proposal.preview).toMatchObject({
        amount: { minor: 24049, currency: 'USD', display: '240.49 USD' },
      });
      expect(proposal.short).toBe(shortHash(proposal.digest));

      const approved = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(approved.kind).toBe('claimed');
      if (approved.kind !== 'claimed') return;
      expect(approved.contract.short).toBe(proposal.short);
      expect(Object.isFrozen(approved.contract.arguments)).toBe(true);

      const outcome = await h.engine.proposals.execute(approved.contract);
      expect(outcome).toEqual({ kind: 'succeeded', result: { payment_id: 'pay_1' } });
      expect(h.world.provider.calls).toBe(1);
      expect(h.world.provider.payments[0]).toMatchObject({
        amount_minor: 24049,
        destination_account_id: 'acct-supplier-7',
        idempotencyKey: approved.contract.idempotencyKey,
      });

      const stored = await h.engine.proposals.get('acme', proposal.id);
      expect(stored?.status).toBe('succeeded');
      expect(stored?.outcome).toEqual(outcome);

      const audit = await h.engine.audit.events('acme', proposal.id);
      expect(audit.map((e) => e.step)).toEqual([
        'proposed',
        'approved',
        'claimed',
        'revalidated',
        'command',
        'outcome',
      ]);
      const shorts = audit.flatMap((e) => [e.short.proposed, e.short.approved].filter(Boolean));
      expect(new Set(shorts)).toEqual(new Set([proposal.short]));
      const command = audit.find((e) => e.step === 'command');
      expect(command?.commandId).toMatch(/^cmd_/);
      expect(command?.digests.requested).toBe(proposal.scopeDigest);
      expect(audit.find((e) => e.step === 'approved')?.reason).toBe('approved');
    });

    it('returns the stored outcome to a replayed approval and audits replayed, never executing again', async () => {
      const proposal = await proposePayment(h.engine);
      const first = await h.engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(first.kind).toBe('completed');
      const again = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver('acme', 'bob'),
        seenDigest: proposal.digest,
      });
      expect(again.kind).toBe('already_completed');
      if (again.kind === 'already_completed' && first.kind === 'completed')
        expect(again.outcome).toEqual(first.outcome);
      expect(h.world.provider.calls).toBe(1);
      const steps = (await h.engine.audit.events('acme', proposal.id)).map((e) => [e.step, e.reason]);
      expect(steps).toContainEqual(['replayed', 'replayed']);
    });

    it('claims once among 50 concurrent approvals', async () => {
      const proposal = await proposePayment(h.engine);
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          h.engine.proposals.approve({
            tenant: 'acme',
            proposalId: proposal.id,
            approver: approver('acme', `op${i}`),
            seenDigest: proposal.digest,
          }),
        ),
      );
      expect(results.filter((r) => r.kind === 'claimed')).toHaveLength(1);
      const refusals = results.filter((r) => r.kind === 'not_approvable');
      expect(refusals).toHaveLength(49);
      for (const r of refusals) if (r.kind === 'not_approvable') expect(r.reason).toBe('replayed');
    });
  });

  describe('approval checks, in DESIGN order, each with its exact reason', () => {
    it('another tenant gets not_found, identical to a missing id', async () => {
      const proposal = await proposePayment(h.engine);
      const foreign = await h.engine.proposals.approve({
        tenant: 'globex',
        proposalId: proposal.id,
        approver: approver('globex'),
        seenDigest: proposal.digest,
      });
      const missing = await h.engine.proposals.approve({
        tenant: 'globex',
        proposalId: 'prp_0000000000000000000000000',
        approver: approver('globex'),
        seenDigest: proposal.digest,
      });
      expect(foreign).toEqual({ kind: 'not_approvable', reason: 'not_found', message: 'no such proposal' });
      expect(missing).toEqual(foreign);
      const crossTenantActor = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver('globex'),
        seenDigest: proposal.digest,
      });
      expect(crossTenantActor).toEqual(foreign);
      expect(await h.engine.proposals.get('globex', proposal.id)).toBeUndefined();
    });

    it('a viewer and an agent are forbidden; the proposing principal is separation_of_duties', async () => {
      const proposal = await proposePayment(h.engine);
      const reasons = [];
      for (const actor of [viewer(), agent(), { ...approver(), id: agent().id }]) {
        const r = await h.engine.proposals.approve({
          tenant: 'acme',
          proposalId: proposal.id,
          approver: actor,
          seenDigest: proposal.digest,
        });
        reasons.push(r.kind === 'not_approvable' && r.reason);
      }
      expect(reasons).toEqual(['forbidden', 'forbidden', 'separation_of_duties']);
      expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
    });

    it('a digest the approver did not see is stale_view', async () => {
      const proposal = await proposePayment(h.engine);
      const r = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: 'a'.repeat(64),
      });
      expect(r.kind === 'not_approvable' && r.reason).toBe('stale_view');
      expect(h.world.provider.calls).toBe(0);
    });

    it('expiry is checked with the injected clock: 1 ms before approves, at expiry refuses', async () => {
      const early = await proposePayment(h.engine, 'acme', 'inv-104');
      const late = await proposePayment(h.engine, 'acme', 'inv-105');
      h.clock.advance(30 * 60_000 - 1);
      const ok = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: early.id,
        approver: approver(),
        seenDigest: early.digest,
      });
      expect(ok.kind).toBe('claimed');
      h.clock.advance(1);
      const r = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: late.id,
        approver: approver(),
        seenDigest: late.digest,
      });
      expect(r.kind === 'not_approvable' && r.reason).toBe('expired');
      expect((await h.engine.proposals.get('acme', late.id))?.status).toBe('expired');
    });

    it('a run id from another operator link is run_mismatch', async () => {
      const proposal = await proposePayment(h.engine, 'acme', 'inv-104', 'run-a');
      const r = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
        runId: 'run-b',
      });
      expect(r.kind === 'not_approvable' && r.reason).toBe('run_mismatch');
    });

    it('a declined proposal cannot be approved', async () => {
      const proposal = await proposePayment(h.engine);
      expect(
        await h.engine.proposals.decline({
          tenant: 'acme',
          proposalId: proposal.id,
          actor: approver(),
          reason: 'wrong supplier',
        }),
      ).toEqual({ kind: 'declined' });
      const r = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(r.kind === 'not_approvable' && r.reason).toBe('declined');
      const [item] = await h.engine.proposals.handback({ tenant: 'acme', runId: 'run-1' });
      expect(item?.text).toBe('A human declined it: wrong supplier');
    });

    it('expireDue expires pending proposals past their expiry and audits them', async () => {
      const proposal = await proposePayment(h.engine);
      expect(await h.engine.sweeps.expireDue()).toBe(0);
      h.clock.advance(30 * 60_000);
      expect(await h.engine.sweeps.expireDue()).toBe(1);
      expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('expired');
      const r = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(r.kind === 'not_approvable' && r.reason).toBe('expired');
    });
  });

  describe('propose refuses what the model cannot be trusted with', () => {
    it('no run id, or a missing one turned into text → run_id_missing, nothing stored', async () => {
      for (const runId of [undefined, null, '', '  ', 'undefined', 'null', ' NULL ', 'Undefined']) {
        const r = await h.engine.proposals.propose({
          operation: 'invoice.pay',
          request: { invoice_id: 'inv-104' },
          tenant: 'acme',
          resource: 'invoice:inv-104',
          requestedBy: agent().id,
          runId,
        });
        expect(r.kind === 'invalid_request' && r.reason).toBe('run_id_missing');
      }
      expect((await h.engine.proposals.list('acme', { limit: 10 })).items).toHaveLength(0);
    });

    it('an extra key is an error the model can correct, never merged', async () => {
      const r = await h.engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104', amount_minor: 1 },
        tenant: 'acme',
        resource: 'invoice:inv-104',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(r.kind).toBe('invalid_request');
      if (r.kind !== 'invalid_request') return;
      expect(r.reason).toBe('invalid_request');
      expect(r.issues).toEqual([{ path: '$.amount_minor', message: 'unknown field' }]);
      expect(r.modelMessage).toContain('$.amount_minor: unknown field');
    });

    it("prepare's safe rejection reaches the model", async () => {
      const r = await h.engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-999' },
        tenant: 'acme',
        resource: 'invoice:inv-999',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(r).toMatchObject({
        kind: 'invalid_request',
        reason: 'invalid_request',
        modelMessage: 'No open invoice inv-999.',
      });
    });

    it('an unknown operation is an invalid request naming $.operation', async () => {
      const r = await h.engine.proposals.propose({
        operation: 'invoice.delete',
        request: {},
        tenant: 'acme',
        resource: 'x',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(r.kind === 'invalid_request' && r.issues[0]?.path).toBe('$.operation');
    });
  });

  describe('edit is a new freeze', () => {
    it('supersedes the old proposal; the old card is refused, the new digest must be approved', async () => {
      const r = await h.engine.proposals.propose({
        operation: 'email_broadcast.apply_draft',
        request: { broadcast_id: 'bc-spring', subject: 'Season opens', body: 'See you Saturday.' },
        tenant: 'acme',
        resource: 'broadcast:bc-spring',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      if (r.kind !== 'proposed') throw new Error(r.modelMessage);
      const old = r.proposal;
      const edited = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: old.id,
        editor: approver(),
        changes: { subject: 'Season opens Saturday' },
      });
      expect(edited.kind).toBe('edited');
      if (edited.kind !== 'edited') return;
      const next = edited.proposal;
      expect(next.digest).not.toBe(old.digest);
      expect(next.supersedes).toBe(old.id);
      expect((await h.engine.proposals.get('acme', old.id))?.status).toBe('superseded');

      const stale = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: old.id,
        approver: approver(),
        seenDigest: old.digest,
      });
      expect(stale.kind === 'not_approvable' && stale.reason).toBe('superseded');
      const wrongDigest = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: next.id,
        approver: approver('acme', 'bob'),
        seenDigest: old.digest,
      });
      expect(wrongDigest.kind === 'not_approvable' && wrongDigest.reason).toBe('stale_view');
      const done = await h.engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: next.id,
        approver: approver('acme', 'bob'),
        seenDigest: next.digest,
      });
      expect(done.kind === 'completed' && done.outcome.kind).toBe('succeeded');

      // proposed abc, edited def (supersedes abc), approved def, executed def
      const oldAudit = await h.engine.audit.events('acme', old.id);
      expect(oldAudit.map((e) => [e.step, e.short.proposed])).toEqual([
        ['proposed', old.short],
        ['edited', old.short],
        ['denied', old.short],
      ]);
      expect(oldAudit[1]?.detail).toMatchObject({ supersededBy: next.id, newDigest: next.digest });
      const newAudit = await h.engine.audit.events('acme', next.id);
      expect(newAudit[0]).toMatchObject({ step: 'proposed', detail: { supersedes: old.id } });
      expect(
        newAudit
          .filter((e) => e.step === 'approved' || e.step === 'outcome')
          .every((e) => e.short.approved === next.short),
      ).toBe(true);
    });

    it('only editable fields may change', async () => {
      const proposal = await proposePayment(h.engine);
      const r = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: proposal.id,
        editor: approver(),
        changes: { invoice_id: 'inv-105' },
      });
      expect(r.kind === 'invalid_request' && r.issues[0]?.path).toBe('$.changes.invoice_id');
      expect((await h.engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
    });
  });
});
