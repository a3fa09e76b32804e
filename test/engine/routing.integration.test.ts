import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Actor } from '../../src/index.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { agent, approver, type Harness, harnessOn, proposeDraft, proposePayment } from '../support/engine.js';
import type { Store } from '../../src/store/store.js';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { messageSend } from '../../src/demo/operations/message-send.js';

const admin: Actor = { id: 'user:root@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };
const fay = approver('acme', 'fay'); // finance
const fin = approver('acme', 'fin'); // finance
const ada = approver('acme', 'ada'); // not finance
const cfo = approver('acme', 'cfo'); // the escalation group
const globexAdmin: Actor = {
  id: 'user:root@globex.test',
  tenant: 'globex',
  kind: 'operator',
  roles: ['admin'],
};

/** Payments over 1,000.00 to finance (escalated to the cfo group after ten minutes); inv-105 is 12,500.00. */
async function routeBigPayments(h: Harness<Store>) {
  for (const [name, members] of [
    ['finance', [fay.id, fin.id]],
    ['cfo', [cfo.id]],
  ] as const) {
    const saved = await h.engine.groups.save({ tenant: 'acme', name, members, actor: admin });
    expect(saved.kind).toBe('saved');
  }
  const route = await h.engine.routes.save({
    tenant: 'acme',
    route: {
      name: 'payments over 1,000.00',
      operation: 'invoice.pay',
      amount: { field: 'amount_minor', above: 100_000 },
      group: 'finance',
      channel: '#finance-approvals',
      escalation: { afterMs: 600_000, group: 'cfo', channel: '#cfo' },
    },
    actor: admin,
  });
  if (route.kind !== 'saved') throw new Error(route.message);
  return route.route;
}

for (const backend of BACKENDS) {
  describe(`routing and escalation (${backend})`, () => {
    let h: Harness<Store>;
    beforeAll(() => warmUp(backend), 120_000);
    afterEach(async () => {
      await h?.close();
    });

    /** `actor` approves exactly what `p` showed. */
    const approveAs = (actor: Actor, p: { readonly id: string; readonly digest: string }) =>
      h.engine.proposals.approve({ tenant: 'acme', proposalId: p.id, approver: actor, seenDigest: p.digest });
    const needs = async (actor: Actor) =>
      (await h.engine.proposals.list('acme', { decidableBy: actor })).items.map((p) => p.id);

    it('only the routed group decides a routed proposal; others are refused forbidden naming the route', async () => {
      h = await harnessOn(backend);
      await routeBigPayments(h);
      const big = await proposePayment(h.engine, 'acme', 'inv-105');
      expect(big.route).toMatchObject({
        group: 'finance',
        channel: '#finance-approvals',
        name: 'payments over 1,000.00',
      });
      const refused = await approveAs(ada, big);
      expect(refused).toMatchObject({ kind: 'not_approvable', reason: 'forbidden' });
      if (refused.kind === 'not_approvable')
        expect(refused.message).toContain('route payments over 1,000.00');
      const declined = await h.engine.proposals.decline({ tenant: 'acme', proposalId: big.id, actor: ada });
      expect(declined).toMatchObject({ kind: 'not_declinable', reason: 'forbidden' });
      const edited = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: big.id,
        editor: ada,
        changes: {},
      });
      expect(edited).toMatchObject({ kind: 'not_editable', reason: 'forbidden' });
      const stored = (await h.engine.proposals.get('acme', big.id))!;
      expect(h.engine.proposals.mayDecide(ada, stored)).toMatchObject({
        kind: 'refused',
        reason: 'forbidden',
      });
      expect(h.engine.proposals.mayDecide(ada, stored, 'decline')).toMatchObject({ reason: 'forbidden' });
      expect(h.engine.proposals.mayDecide(fay, stored)).toEqual({ kind: 'allowed' });
      // "Needs you": the finance group sees it, ada does not.
      expect(await needs(ada)).toEqual([]);
      expect(await needs(fay)).toEqual([big.id]);
      // The quorum of two is completed by the group's two members.
      const first = await approveAs(fay, big);
      expect(first.kind).toBe('awaiting_approvals');
      const second = await approveAs(fin, big);
      expect(second.kind).toBe('claimed');
      const events = await h.engine.audit.events('acme', big.id);
      expect(events.find((e) => e.step === 'proposed')?.detail).toMatchObject({
        route: 'payments over 1,000.00',
        group: 'finance',
      });
      expect(events.filter((e) => e.step === 'denied').map((e) => e.reason)).toEqual([
        'forbidden',
        'forbidden',
      ]);
    });

    it('an unrouted proposal goes to every approver as before', async () => {
      h = await harnessOn(backend);
      await routeBigPayments(h);
      // 240.49 is not above 1,000.00: no route.
      const small = await proposePayment(h.engine, 'acme', 'inv-104');
      expect(small.route).toBeNull();
      expect(await needs(ada)).toEqual([small.id]);
      expect(await needs(fay)).toEqual([small.id]);
      const done = await approveAs(ada, small);
      expect(done.kind).toBe('claimed');
    });

    it('a grant never stands in for a route: a routed payment waits for its group, an unrouted one is approved by the grant', async () => {
      h = await harnessOn(backend);
      const group = await h.engine.groups.save({
        tenant: 'acme',
        name: 'finance',
        members: [fay.id],
        actor: admin,
      });
      expect(group.kind).toBe('saved');
      const route = await h.engine.routes.save({
        tenant: 'acme',
        route: {
          name: 'payments over 200.00',
          operation: 'invoice.pay',
          amount: { field: 'amount_minor', above: 20_000 },
          group: 'finance',
        },
        actor: admin,
      });
      expect(route.kind).toBe('saved');
      const made = await h.engine.grants.create({
        tenant: 'acme',
        grantedBy: admin,
        subject: agent('acme').id,
        operations: ['invoice.pay'],
        resource: 'invoice:*',
        constraints: { currency: { equals: 'USD' } },
        expiresAt: h.clock.now() + 3_600_000,
      });
      if (made.kind !== 'granted') throw new Error(made.kind);
      const propose = (invoice: string) =>
        h.engine.proposals.propose({
          operation: 'invoice.pay',
          request: { invoice_id: invoice },
          tenant: 'acme',
          requestedBy: agent('acme').id,
          runId: `run-${invoice}`,
        });

      // 240.49 is above 200.00: routed to finance, so the grant does not decide it.
      const routed = await propose('inv-104');
      if (routed.kind !== 'proposed') throw new Error(routed.kind);
      expect(routed.grant).toMatchObject({
        kind: 'refused',
        reason: 'outside_grant',
        grantId: made.grant.id,
      });
      expect(routed.grant?.kind === 'refused' && routed.grant.detail).toContain(
        'routed to the group finance (route payments over 200.00)',
      );
      expect(routed.proposal).toMatchObject({ status: 'pending', route: { group: 'finance' } });
      const denied = (await h.engine.audit.events('acme', routed.proposal.id)).filter(
        (e) => e.step === 'denied',
      );
      expect(denied).toMatchObject([{ reason: 'outside_grant', actor: `grant:${made.grant.id}` }]);
      expect(h.world.provider.calls).toBe(0);
      expect((await h.engine.grants.get('acme', made.grant.id))?.usage).toEqual({ uses: 0, total: 0 });
      const byGroup = await h.engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: routed.proposal.id,
        approver: fay,
        seenDigest: routed.proposal.digest,
      });
      expect(byGroup.kind === 'completed' && byGroup.outcome.kind).toBe('succeeded');

      // 99.99 is not: no route, and the grant approves it as before.
      const unrouted = await propose('inv-107');
      if (unrouted.kind !== 'proposed') throw new Error(unrouted.kind);
      expect(unrouted.proposal.route).toBeNull();
      expect(unrouted.grant).toMatchObject({
        kind: 'approved_by_grant',
        grantId: made.grant.id,
        outcome: { kind: 'succeeded' },
      });
    });

    it('a resource route needs an operation that names its resource: a label the caller chooses could dodge it', async () => {
      const world = demoWorld();
      h = await harnessOn(backend, { world, operations: [...demoOperations(world), messageSend] });
      expect(
        (await h.engine.groups.save({ tenant: 'acme', name: 'finance', members: [fay.id], actor: admin }))
          .kind,
      ).toBe('saved');
      const route = { name: 'vip messages', operation: 'message.send', group: 'finance' };
      const labelled = await h.engine.routes.save({
        tenant: 'acme',
        route: { ...route, resource: 'channel:vip*' },
        actor: admin,
      });
      expect(labelled).toMatchObject({ kind: 'refused', reason: 'invalid_request' });
      if (labelled.kind === 'refused')
        expect(labelled.message).toBe(
          '$.resource: message.send does not name its resource from its arguments, so a resource route cannot be held to it',
        );
      expect(await h.engine.routes.list('acme')).toEqual([]);
      expect((await h.engine.routes.save({ tenant: 'acme', route, actor: admin })).kind).toBe('saved');
    });

    it('a resource pattern routes; an edit by the group is routed again, by the routes as they are then', async () => {
      h = await harnessOn(backend);
      await routeBigPayments(h);
      const drafts = await h.engine.routes.save({
        tenant: 'acme',
        route: {
          name: 'broadcasts',
          operation: 'email_broadcast.apply_draft',
          resource: 'broadcast:bc-autumn*',
          group: 'finance',
        },
        actor: admin,
      });
      if (drafts.kind !== 'saved') throw new Error(drafts.message);
      // A resource outside the pattern is not routed.
      expect((await proposeDraft(h.engine, 'First')).route).toBeNull();
      const widened = await h.engine.routes.save({
        tenant: 'acme',
        id: drafts.route.id,
        route: {
          name: 'broadcasts',
          operation: 'email_broadcast.apply_draft',
          resource: 'broadcast:*',
          group: 'finance',
        },
        actor: admin,
      });
      expect(widened.kind).toBe('saved');
      const draft = await proposeDraft(h.engine);
      expect(draft.route?.name).toBe('broadcasts');
      const outside = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: draft.id,
        editor: ada,
        changes: { subject: 'Opens Saturday' },
      });
      expect(outside).toMatchObject({ kind: 'not_editable', reason: 'forbidden' });
      const edited = await h.engine.proposals.edit({
        tenant: 'acme',
        proposalId: draft.id,
        editor: fay,
        changes: { subject: 'Opens Saturday' },
      });
      if (edited.kind !== 'edited') throw new Error(edited.kind);
      expect(edited.proposal.route).toMatchObject({ name: 'broadcasts', group: 'finance' });
      const events = await h.engine.audit.events('acme', edited.proposal.id);
      expect(events[0]?.detail).toMatchObject({ route: 'broadcasts', group: 'finance' });
      // The editor is a member but never approves their own edit; the other member does.
      expect(h.engine.proposals.mayDecide(fay, edited.proposal)).toMatchObject({
        reason: 'separation_of_duties',
      });
      expect(h.engine.proposals.mayDecide(fin, edited.proposal)).toEqual({ kind: 'allowed' });
    });

    it("a tenant's routes and groups are its own", async () => {
      h = await harnessOn(backend);
      await routeBigPayments(h);
      expect(await h.engine.routes.list('globex')).toEqual([]);
      expect(await h.engine.groups.list('globex')).toEqual([]);
      // Globex's payment of the same amount is unrouted; acme's admin cannot change globex's routes.
      const theirs = await proposePayment(h.engine, 'globex', 'inv-105');
      expect(theirs.route).toBeNull();
      expect(
        await h.engine.groups.save({ tenant: 'globex', name: 'finance', members: [fay.id], actor: admin }),
      ).toMatchObject({ kind: 'refused', reason: 'forbidden' });
      const acmeRoute = (await h.engine.routes.list('acme'))[0]!;
      expect(
        await h.engine.routes.delete({ tenant: 'globex', id: acmeRoute.id, actor: globexAdmin }),
      ).toMatchObject({ kind: 'refused', reason: 'not_found' });
      expect(await h.engine.routes.list('acme')).toHaveLength(1);
      // A non-admin approver manages nothing.
      expect(
        await h.engine.groups.save({ tenant: 'acme', name: 'ops', members: [ada.id], actor: ada }),
      ).toMatchObject({ kind: 'refused', reason: 'forbidden' });
    });

    it('a changed route never re-routes a pending proposal; changes are audited', async () => {
      h = await harnessOn(backend);
      const route = await routeBigPayments(h);
      const big = await proposePayment(h.engine, 'acme', 'inv-105');
      const moved = await h.engine.routes.save({
        tenant: 'acme',
        id: route.id,
        route: { name: 'everything to ops', operation: 'invoice.pay', group: 'cfo' },
        actor: admin,
      });
      expect(moved.kind).toBe('saved');
      const stored = (await h.engine.proposals.get('acme', big.id))!;
      expect(stored.route?.group).toBe('finance');
      expect(await needs(fay)).toEqual([big.id]);
      expect(await needs(cfo)).toEqual([]);
      // The group is in use: it cannot be deleted until the route changes.
      expect(await h.engine.groups.delete({ tenant: 'acme', name: 'cfo', actor: admin })).toMatchObject({
        kind: 'refused',
        reason: 'invalid_request',
      });
      expect(await h.engine.routes.delete({ tenant: 'acme', id: route.id, actor: admin })).toEqual({
        kind: 'deleted',
      });
      expect(await h.engine.groups.delete({ tenant: 'acme', name: 'cfo', actor: admin })).toEqual({
        kind: 'deleted',
      });
      const routeEvents = await h.engine.audit.events('acme', route.id);
      expect(routeEvents.map((e) => [e.step, e.actor, e.detail['action']])).toEqual([
        ['route_changed', admin.id, 'created'],
        ['route_changed', admin.id, 'updated'],
        ['route_changed', admin.id, 'deleted'],
      ]);
      const groupEvents = await h.engine.audit.events('acme', 'grp_cfo');
      expect(groupEvents.map((e) => [e.step, e.detail['action']])).toEqual([
        ['group_changed', 'created'],
        ['group_changed', 'deleted'],
      ]);
      expect(groupEvents[0]?.detail['added']).toEqual([cfo.id]);
    });

    it('removing a member from the group withdraws their approval toward a quorum; they decide it no more', async () => {
      // Every id is an active approver of acme, as the principal directory would say.
      h = await harnessOn(backend, {
        approverDirectory: {
          current: async (_db, tenant, ids) => new Map(ids.map((id) => [id, { ...approver(tenant), id }])),
        },
      });
      await routeBigPayments(h);
      const big = await proposePayment(h.engine, 'acme', 'inv-105');
      const first = await approveAs(fay, big);
      expect(first.kind).toBe('awaiting_approvals');
      const saved = await h.engine.groups.save({
        tenant: 'acme',
        name: 'finance',
        members: [fin.id],
        actor: admin,
      });
      expect(saved.kind).toBe('saved');
      const stored = (await h.engine.proposals.get('acme', big.id))!;
      expect(stored.approvals.given).toEqual([]);
      expect(h.engine.proposals.mayDecide(fay, stored)).toMatchObject({
        kind: 'refused',
        reason: 'forbidden',
      });
      const withdrawn = (await h.engine.audit.events('acme', big.id)).filter(
        (e) => e.step === 'approval_withdrawn',
      );
      expect(withdrawn).toHaveLength(1);
      expect(withdrawn[0]).toMatchObject({
        actor: admin.id,
        reason: 'forbidden',
        detail: { approver: fay.id },
      });
    });

    it('escalates an undecided proposal once its time has come, by the clock, once', async () => {
      h = await harnessOn(backend);
      await routeBigPayments(h);
      const big = await proposePayment(h.engine, 'acme', 'inv-105');
      expect(await h.engine.sweeps.escalateDue()).toBe(0);
      h.clock.advance(600_000 - 1);
      expect(await h.engine.sweeps.escalateDue()).toBe(0);
      expect(await needs(cfo)).toEqual([]);
      h.clock.advance(1);
      expect(await h.engine.sweeps.escalateDue()).toBe(1);
      expect(await h.engine.sweeps.escalateDue()).toBe(0);
      const stored = (await h.engine.proposals.get('acme', big.id))!;
      expect(stored.route?.escalatedAt?.getTime()).toBe(h.clock.now());
      expect(await needs(cfo)).toEqual([big.id]);
      expect(await needs(fay)).toEqual([big.id]);
      expect(await needs(ada)).toEqual([]);
      const escalated = (await h.engine.audit.events('acme', big.id)).filter((e) => e.step === 'escalated');
      expect(escalated).toHaveLength(1);
      expect(escalated[0]).toMatchObject({
        actor: 'system:escalation',
        detail: { from: 'finance', to: 'cfo', channel: '#cfo' },
      });
      // The escalation group may now decide it.
      const declined = await h.engine.proposals.decline({ tenant: 'acme', proposalId: big.id, actor: cfo });
      expect(declined.kind).toBe('declined');
    });

    it('never escalates a decided or expired proposal', async () => {
      h = await harnessOn(backend);
      await routeBigPayments(h);
      const big = await proposePayment(h.engine, 'acme', 'inv-105');
      await h.engine.proposals.decline({ tenant: 'acme', proposalId: big.id, actor: fay });
      h.clock.advance(600_000);
      expect(await h.engine.sweeps.escalateDue()).toBe(0);
    });

    it('reminds the approvers of a proposal once before it expires', async () => {
      h = await harnessOn(backend);
      const p = await proposePayment(h.engine, 'acme', 'inv-104');
      const before = 10 * 60_000;
      expect(await h.engine.sweeps.remindDue({ beforeExpiryMs: before })).toBe(0);
      h.clock.time = p.expiresAt.getTime() - before;
      expect(await h.engine.sweeps.remindDue({ beforeExpiryMs: before })).toBe(1);
      h.clock.advance(60_000);
      expect(await h.engine.sweeps.remindDue({ beforeExpiryMs: before })).toBe(0);
      const reminded = (await h.engine.audit.events('acme', p.id)).filter((e) => e.step === 'reminded');
      expect(reminded).toHaveLength(1);
      expect(reminded[0]?.actor).toBe('system:reminder');
    });
  });
}
