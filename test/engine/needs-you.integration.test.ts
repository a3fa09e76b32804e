import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/index.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import {
  agent,
  approver,
  type Harness,
  harnessOn,
  proposeDraft,
  proposePayment,
  viewer,
} from '../support/engine.js';
import type { Store } from '../../src/store/store.js';

const ada = approver('acme', 'ada');
const bob = approver('acme', 'bob');
const carol = approver('acme', 'carol');
const gus = approver('globex', 'gus');

for (const backend of BACKENDS) {
  describe(`"Needs you": the proposals a principal may still decide (${backend})`, () => {
    let h: Harness<Store>;
    beforeAll(() => warmUp(backend), 120_000);
    afterEach(async () => {
      await h?.close();
    });

    const needs = async (actor: Actor, tenant = 'acme') =>
      (await h.engine.proposals.list(tenant, { decidableBy: actor })).items.map((p) => p.id);
    const count = (actor: Actor, tenant = 'acme') => h.engine.proposals.count(tenant, { decidableBy: actor });

    it("a first approval of two takes it out of the first approver's list and leaves it in the second's", async () => {
      h = await harnessOn(backend);
      // inv-105 is 12,500.00 USD: two approvers.
      const p = await proposePayment(h.engine, 'acme', 'inv-105');
      expect(await needs(ada)).toEqual([p.id]);
      expect(await needs(bob)).toEqual([p.id]);
      const first = await h.engine.proposals.approve({
        tenant: 'acme',
        proposalId: p.id,
        approver: ada,
        seenDigest: p.digest,
      });
      expect(first.kind).toBe('awaiting_approvals');
      expect(await needs(ada)).toEqual([]);
      expect(await count(ada)).toBe(0);
      expect(await needs(bob)).toEqual([p.id]);
      expect(await count(bob)).toBe(1);
      // The engine's own answer agrees: ada is refused exactly why the list left it out.
      const stored = (await h.engine.proposals.get('acme', p.id))!;
      expect(h.engine.proposals.mayDecide(ada, stored)).toMatchObject({
        kind: 'refused',
        reason: 'already_approved',
      });
      // Bob completes it: nobody's list holds it any more.
      const second = await h.engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: bob,
        seenDigest: p.digest,
      });
      expect(second.kind).toBe('completed');
      expect([await needs(bob), await needs(carol)]).toEqual([[], []]);
    });

    it('never lists a proposal for its proposer or its editor, nor for an agent, a viewer or another tenant', async () => {
      h = await harnessOn(backend);
      const draft = await proposeDraft(h.engine);
      const edit = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: draft.id,
        editor: carol,
        changes: { subject: 'Season opens Saturday' },
      });
      if (edit.kind !== 'edited') throw new Error(`expected edited, got ${edit.kind}`);
      const edited = edit.proposal.id;
      // An operator who proposed (through an assistant acting as them) never approves it.
      const own = await h.engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104' },
        tenant: 'acme',
        requestedBy: ada.id,
        runId: 'run-own',
      });
      if (own.kind !== 'proposed') throw new Error(`expected proposed, got ${own.kind}`);
      expect((await needs(carol)).sort()).toEqual([own.proposal.id]);
      expect(h.engine.proposals.mayDecide(carol, edit.proposal)).toMatchObject({
        kind: 'refused',
        reason: 'separation_of_duties',
      });
      expect(await needs(ada)).toEqual([edited]);
      expect((await needs(bob)).sort()).toEqual([edited, own.proposal.id].sort());
      expect(await count(bob)).toBe(2);
      expect(await needs(agent())).toEqual([]);
      expect(await needs(viewer())).toEqual([]);
      // globex's approver: nothing of acme, whichever tenant the list is asked for.
      expect(await needs(gus)).toEqual([]);
      expect(await needs(gus, 'globex')).toEqual([]);
      expect(await count(gus)).toBe(0);
      // Asked with another tenant's actor, acme's list is empty too.
      expect(await needs({ ...bob, tenant: 'globex' })).toEqual([]);
    });

    it('lets the editor see their edit when editor approval is allowed (a single approval only)', async () => {
      h = await harnessOn(backend, { allowEditorApproval: true });
      const draft = await proposeDraft(h.engine);
      const edit = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: draft.id,
        editor: carol,
        changes: { subject: 'Season opens Saturday' },
      });
      if (edit.kind !== 'edited') throw new Error(`expected edited, got ${edit.kind}`);
      expect(await needs(carol)).toEqual([edit.proposal.id]);
    });

    it('drops an expired proposal, and a status other than pending matches nothing', async () => {
      h = await harnessOn(backend);
      const p = await proposePayment(h.engine);
      expect(await needs(ada)).toEqual([p.id]);
      expect((await h.engine.proposals.list('acme', { decidableBy: ada, status: 'declined' })).items).toEqual(
        [],
      );
      h.clock.advance(31 * 60_000);
      // Past its expiry but not yet swept: still stored as pending, never "needs you".
      expect(await needs(ada)).toEqual([]);
      expect(await count(ada)).toBe(0);
    });

    it('pages with the list cursor: every proposal once, in order, the ones already approved skipped', async () => {
      h = await harnessOn(backend, { limits: false });
      const made: { id: string; digest: string }[] = [];
      for (let i = 0; i < 9; i++) {
        made.push(await proposePayment(h.engine, 'acme', 'inv-105', `run-${i}`));
        h.clock.advance(1_000);
      }
      // Ada approves every third: they wait for a second approver, not for her.
      for (const p of made.filter((_, i) => i % 3 === 0))
        await h.engine.proposals.approve({
          tenant: 'acme',
          proposalId: p.id,
          approver: ada,
          seenDigest: p.digest,
        });
      const expected = made
        .filter((_, i) => i % 3 !== 0)
        .map((p) => p.id)
        .reverse();
      for (const sort of ['created', 'expires'] as const) {
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await h.engine.proposals.list('acme', {
            decidableBy: ada,
            sort,
            limit: 2,
            ...(cursor ? { cursor } : {}),
          });
          expect(page.items.length).toBeLessThanOrEqual(2);
          seen.push(...page.items.map((p) => p.id));
          cursor = page.nextCursor;
          pages += 1;
        } while (cursor);
        expect(pages).toBe(3);
        expect(seen).toEqual(sort === 'created' ? expected : [...expected].reverse());
      }
      expect(await count(ada)).toBe(6);
      expect(await count(bob)).toBe(9);
    });
  });
}
