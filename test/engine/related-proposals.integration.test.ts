import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { approver, type Harness, harnessOn, proposeDraft, proposePayment } from '../support/engine.js';

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function run(engine: Harness['engine'], p: { id: string; digest: string }) {
    const r = await engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: p.id,
      approver: approver(),
      seenDigest: p.digest,
    });
    if (r.kind !== 'completed') throw new Error(`expected completed, got ${r.kind}`);
    return r.outcome;
  }

  describe('engine.related', () => {
    it('links an edit both ways to the proposal it supersedes', async () => {
      h = await harnessOn(backend);
      const old = await proposeDraft(h.engine);
      const edited = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: old.id,
        editor: approver(),
        changes: { subject: 'Season opens Saturday' },
      });
      if (edited.kind !== 'edited') throw new Error(edited.kind);
      const forward = await h.engine.proposals.related((await h.engine.proposals.get('acme', old.id))!);
      expect(forward.supersededBy?.id).toBe(edited.proposal.id);
      expect(forward.supersedes).toBeUndefined();
      const back = await h.engine.proposals.related(edited.proposal);
      expect(back.supersedes?.id).toBe(old.id);
      expect(back.supersededBy).toBeUndefined();
      // An edit links to what it was edited from, never also as a re-proposal.
      expect(back.replaces).toBeUndefined();
    });

    it('links a proposal made again after revision_required to the one it replaces, and back', async () => {
      h = await harnessOn(backend);
      const first = await proposePayment(h.engine);
      h.world.invoices.find('acme', 'inv-104')!.dueMinor = 26_000;
      expect((await run(h.engine, first)).kind).toBe('revision_required');
      h.clock.advance(1_000);
      const other = await proposePayment(h.engine, 'acme', 'inv-105');
      h.clock.advance(1_000);
      const again = await proposePayment(h.engine);
      h.clock.advance(1_000);
      const third = await proposePayment(h.engine);

      const ofAgain = await h.engine.proposals.related(again);
      expect(ofAgain.replaces?.id).toBe(first.id);
      const ofFirst = await h.engine.proposals.related((await h.engine.proposals.get('acme', first.id))!);
      expect(ofFirst.replacedBy?.id).toBe(again.id);
      expect(ofFirst.replaces).toBeUndefined();
      // Another invoice's proposal replaces nothing; a proposal still pending is replaced by nothing.
      expect((await h.engine.proposals.related(other)).replaces).toBeUndefined();
      expect((await h.engine.proposals.related(again)).replacedBy).toBeUndefined();
      // The same scope: `again` and `third` wait with the same amount, account and invoice.
      expect(ofAgain.sameScope.map((p) => p.id)).toEqual([third.id]);
      expect((await h.engine.proposals.related(third)).sameScope.map((p) => p.id)).toEqual([again.id]);
      expect(ofAgain.sameScopeTruncated).toBe(false);
    });

    it('never counts an expired proposal, or another tenant’s, as waiting with the same scope', async () => {
      h = await harnessOn(backend);
      const a = await proposePayment(h.engine);
      await proposePayment(h.engine, 'globex');
      h.clock.advance(31 * 60_000);
      const b = await proposePayment(h.engine);
      expect((await h.engine.proposals.related(b)).sameScope).toEqual([]);
      expect(a.scopeDigest).toBe(b.scopeDigest);
    });
  });
});
