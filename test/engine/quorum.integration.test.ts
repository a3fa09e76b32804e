import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld, type DemoWorld } from '../../src/demo/demo-world.js';
import { type Actor, createEngine, type Engine, type EngineOptions } from '../../src/index.js';
import type { AnyOperation } from '../../src/operation/define-operation.js';
import type { Store } from '../../src/store/store.js';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { BACKENDS, type Backend, createBackend, type RawSql } from '../support/backends.js';
import { agent, approver, ManualClock } from '../support/engine.js';

const admin: Actor = { id: 'user:admin@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };
const ada = approver('acme', 'ada');
const bob = approver('acme', 'bob');
const carol = approver('acme', 'carol');
const approvers = (n: number) => Array.from({ length: n }, (_, i) => approver('acme', `approver${i}`));

// Payments of 10,000.00 or more need two approvers (src/demo/operations/invoice-pay.ts): inv-105 is
// 12,500.00 USD to Contoso Freight.
for (const name of BACKENDS) {
  describe(`approval policies with quorum (${name})`, () => {
    let backend: Backend;
    let store: Store;
    let sql: RawSql;
    let engine: Engine;
    let world: DemoWorld;
    let clock: ManualClock;

    const open = async (
      options: Partial<EngineOptions> = {},
      operations: (ops: AnyOperation[]) => AnyOperation[] = (ops) => ops,
    ) => {
      await engine?.close();
      store = await backend.open();
      // An operator may re-point a payment at another invoice here, so edits can be raced.
      const editable = demoOperations(world).map((o) =>
        o.kind === 'invoice.pay' ? { ...o, editable: ['invoice_id'] } : o,
      );
      engine = await createEngine({
        store,
        operations: operations(editable),
        clock,
        ...options,
      });
    };
    const propose = async (invoice = 'inv-105') => {
      const r = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      if (r.kind !== 'proposed') throw new Error(`expected proposed, got ${r.kind}`);
      return r.proposal;
    };
    const approve = (actor: Actor, p: { id: string; digest: string }) =>
      engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: actor,
        seenDigest: p.digest,
      });
    const steps = async (id: string) => (await engine.audit.events('acme', id)).map((e) => e.step);

    beforeEach(async () => {
      backend = await createBackend(name);
      world = demoWorld();
      clock = new ManualClock();
      engine = undefined as unknown as Engine;
      await open();
      sql = await backend.sql();
    });
    afterEach(async () => {
      await engine.close();
      await sql.close();
      await backend.dispose();
    });

    it('12,500.00 USD waits at "1 of 2"; the second approver completes it and it executes once', async () => {
      const p = await propose();
      expect(p.approvals).toEqual({ required: 2, roles: [], given: [] });
      const first = await approve(ada, p);
      expect(first).toMatchObject({ kind: 'awaiting_approvals', required: 2, given: [{ by: ada.id }] });
      expect(world.provider.calls).toBe(0);
      const waiting = await engine.proposals.get('acme', p.id);
      expect(waiting?.status).toBe('pending');
      expect(waiting?.approvals.given.map((g) => g.by)).toEqual([ada.id]);
      const second = await approve(bob, p);
      expect(second.kind === 'completed' && second.outcome.kind).toBe('succeeded');
      expect(world.provider.calls).toBe(1);
      const done = await engine.proposals.get('acme', p.id);
      expect(done?.approvals.given.map((g) => g.by).sort()).toEqual([ada.id, bob.id]);
      expect(await steps(p.id)).toEqual([
        'proposed',
        'partially_approved',
        'approved',
        'claimed',
        'revalidated',
        'command',
        'outcome',
      ]);
      const approved = (await engine.audit.events('acme', p.id)).find((e) => e.step === 'approved');
      expect(approved?.detail).toMatchObject({ approvers: [ada.id, bob.id].sort(), required: 2 });
      // A third approval replays the stored outcome; nothing runs again.
      expect((await approve(carol, p)).kind).toBe('already_completed');
      expect(world.provider.calls).toBe(1);
    });

    it('a payment under 10,000.00 still needs one approval', async () => {
      const p = await propose('inv-104');
      expect(p.approvals.required).toBe(1);
      const r = await approve(ada, p);
      expect(r.kind === 'completed' && r.outcome.kind).toBe('succeeded');
      expect((await engine.proposals.get('acme', p.id))?.approvals.given.map((g) => g.by)).toEqual([ada.id]);
    });

    it('the same person cannot count twice: already_approved, and nothing runs', async () => {
      const p = await propose();
      await approve(ada, p);
      expect(await approve(ada, p)).toMatchObject({ kind: 'not_approvable', reason: 'already_approved' });
      expect(world.provider.calls).toBe(0);
      const waiting = await engine.proposals.get('acme', p.id);
      expect(waiting?.status).toBe('pending');
      expect(waiting?.approvals.given).toHaveLength(1);
    });

    it('the proposer never counts, and the editor never counts even where editors may approve alone', async () => {
      await open({ allowEditorApproval: true });
      const p = await propose('inv-104');
      const proposerAsOperator: Actor = { ...ada, id: agent().id };
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: p.id,
        editor: carol,
        changes: { invoice_id: 'inv-105' },
      });
      expect(edited.kind).toBe('edited');
      if (edited.kind !== 'edited') return;
      const next = edited.proposal;
      expect(next.approvals.required).toBe(2);
      expect(await approve(proposerAsOperator, next)).toMatchObject({ reason: 'separation_of_duties' });
      expect(await approve(carol, next)).toMatchObject({ reason: 'separation_of_duties' });
      expect((await approve(ada, next)).kind).toBe('awaiting_approvals');
      expect((await engine.proposals.get('acme', next.id))?.approvals.given.map((g) => g.by)).toEqual([
        ada.id,
      ]);
      expect(world.provider.calls).toBe(0);
    });

    it('an edit supersedes: the partial approvals stay with the old proposal, the new one starts over', async () => {
      const p = await propose();
      await approve(ada, p);
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: p.id,
        editor: carol,
        changes: { invoice_id: 'inv-105' },
      });
      if (edited.kind !== 'edited') throw new Error(edited.kind);
      expect(edited.proposal.approvals.given).toEqual([]);
      expect(await approve(bob, p)).toMatchObject({ reason: 'superseded' });
      expect((await approve(bob, edited.proposal)).kind).toBe('awaiting_approvals');
      expect(world.provider.calls).toBe(0);
      const r = await approve(ada, edited.proposal);
      expect(r.kind === 'completed' && r.outcome.kind).toBe('succeeded');
    });

    it('a decline by an eligible approver ends it; the partial approval counts for nothing', async () => {
      const p = await propose();
      await approve(ada, p);
      expect((await engine.proposals.decline({ tenant: 'acme', proposalId: p.id, actor: carol })).kind).toBe(
        'declined',
      );
      expect(await approve(bob, p)).toMatchObject({ reason: 'declined' });
      expect(world.provider.calls).toBe(0);
    });

    it('expiry applies between approvals', async () => {
      const p = await propose();
      await approve(ada, p);
      clock.advance(31 * 60_000);
      expect(await approve(bob, p)).toMatchObject({ reason: 'expired' });
      expect((await engine.proposals.get('acme', p.id))?.status).toBe('expired');
      expect(world.provider.calls).toBe(0);
    });

    it('a role the policy names is required to approve and to decline: forbidden', async () => {
      await open({}, (ops) =>
        ops.map((o) =>
          o.kind === 'invoice.pay' ? { ...o, approvalsOf: () => ({ required: 2, roles: ['treasurer'] }) } : o,
        ),
      );
      const p = await propose('inv-104');
      expect(p.approvals).toMatchObject({ required: 2, roles: ['treasurer'] });
      expect(await approve(ada, p)).toMatchObject({ reason: 'forbidden' });
      expect(await engine.proposals.decline({ tenant: 'acme', proposalId: p.id, actor: ada })).toMatchObject({
        reason: 'forbidden',
      });
      const treasurer = (name: string): Actor => ({
        ...approver('acme', name),
        roles: ['approver', 'treasurer'],
      });
      expect((await approve(treasurer('t1'), p)).kind).toBe('awaiting_approvals');
      const r = await approve(treasurer('t2'), p);
      expect(r.kind === 'completed' && r.outcome.kind).toBe('succeeded');
    });

    it('a changed policy never changes what an existing proposal needs (frozen in its digest)', async () => {
      const strict = await propose();
      await approve(ada, strict);
      // The operation now asks three approvals for every payment: the frozen 2 still hold.
      await open({}, (ops) =>
        ops.map((o) =>
          o.kind === 'invoice.pay' ? { ...o, approvalsOf: () => ({ required: 3, roles: [] }) } : o,
        ),
      );
      const r = await approve(bob, strict);
      expect(r.kind === 'completed' && r.outcome.kind).toBe('succeeded');
      const lenient = await propose('inv-104');
      expect(lenient.approvals.required).toBe(3);
    });

    it('a database writer who lowers the stored quorum gets corrupt_approval_record, not an execution', async () => {
      const p = await propose();
      await sql.run('UPDATE countersign_proposals SET policy_json = ? WHERE id = ?', [
        '{"required":1,"roles":[]}',
        p.id,
      ]);
      expect(await approve(ada, p)).toMatchObject({ reason: 'corrupt_approval_record' });
      // A policy that is not even JSON: pages still read it; approval still refuses it.
      await sql.run('UPDATE countersign_proposals SET policy_json = ? WHERE id = ?', ['{"required":', p.id]);
      expect((await engine.proposals.list('acme')).items.map((i) => i.id)).toContain(p.id);
      expect(await approve(bob, p)).toMatchObject({ reason: 'corrupt_approval_record' });
      expect(world.provider.calls).toBe(0);
    });

    it('with a seal key, an approval row written into the database by hand never counts', async () => {
      await open({ sealKey: 'q'.repeat(48) });
      const p = await propose();
      await sql.run(
        'INSERT INTO countersign_approvals (tenant, proposal_id, approver, digest, at, seal) VALUES (?, ?, ?, ?, ?, ?)',
        ['acme', p.id, 'user:mallory@acme.test', p.digest, clock.now(), 'f'.repeat(64)],
      );
      expect(await approve(ada, p)).toMatchObject({ kind: 'awaiting_approvals', required: 2 });
      expect(world.provider.calls).toBe(0);
      const second = await approve(bob, p);
      expect(second.kind === 'completed' && second.outcome.kind).toBe('succeeded');
      const approved = (await engine.audit.events('acme', p.id)).find((e) => e.step === 'approved');
      expect(approved?.detail).toMatchObject({ approvers: [ada.id, bob.id].sort() });
    });

    it('no single admin completes a two-person payment through a grant: asking is refused, an old grant that said so is not honored', async () => {
      const bounds = {
        tenant: 'acme',
        grantedBy: admin,
        subject: agent().id,
        operations: ['invoice.pay'],
        resource: 'invoice:*',
        constraints: { currency: { equals: 'USD' } },
        expiresAt: clock.now() + 3_600_000,
      };
      // What a JavaScript caller or an old client may still send.
      const asked = await engine.grants.create({
        ...bounds,
        satisfiesQuorum: true,
      } as unknown as typeof bounds);
      expect(asked).toMatchObject({ kind: 'invalid_grant', issues: [{ path: '$.satisfiesQuorum' }] });
      expect(await engine.grants.list('acme')).toEqual([]);

      const made = await engine.grants.create(bounds);
      if (made.kind !== 'granted') throw new Error(made.kind);
      // A grant stored while the option existed, saying it may stand in for a quorum.
      await sql.run('UPDATE countersign_grants SET satisfies_quorum = 1 WHERE id = ?', [made.grant.id]);
      const r = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-105' },
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(r.kind === 'proposed' && r.grant).toMatchObject({ kind: 'refused', reason: 'outside_grant' });
      expect(r.kind === 'proposed' && r.grant?.kind === 'refused' && r.grant.detail).toContain(
        'needs 2 approvals',
      );
      expect(r.kind === 'proposed' && r.proposal.status).toBe('pending');
      expect(world.provider.calls).toBe(0);
      // The grant still covers a single-approval payment.
      const small = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104' },
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(small.kind === 'proposed' && small.grant?.kind).toBe('approved_by_grant');
      expect(world.provider.calls).toBe(1);
    });

    describe('an approval counts only while its approver may still decide', () => {
      const openWithDirectory = async () => {
        const directory = new PrincipalDirectory(store, { passwordCost: 1024 });
        await directory.ensureTenant('acme');
        for (const who of ['ada', 'bob', 'carol'])
          await directory.addOperator({
            tenant: 'acme',
            email: `${who}@acme.test`,
            password: 'correct horse battery',
            roles: ['approver'],
          });
        await engine.close();
        store = await backend.open();
        engine = await createEngine({
          store,
          operations: demoOperations(world),
          clock,
          approverDirectory: new PrincipalDirectory(store, { passwordCost: 1024 }),
        });
      };
      const withdrawals = async (id: string) =>
        (await engine.audit.events('acme', id))
          .filter((e) => e.step === 'approval_withdrawn')
          .map((e) => ({ reason: e.reason, approver: e.detail['approver'] }));

      it("a disabled approver's approval is withdrawn (approver_inactive) and the payment waits for another", async () => {
        await openWithDirectory();
        const p = await propose();
        expect(await approve(ada, p)).toMatchObject({ kind: 'awaiting_approvals', given: [{ by: ada.id }] });
        await sql.run('UPDATE countersign_operators SET disabled_at = ? WHERE email = ?', [
          clock.now(),
          'ada@acme.test',
        ]);
        const second = await approve(bob, p);
        expect(second).toMatchObject({ kind: 'awaiting_approvals', required: 2, given: [{ by: bob.id }] });
        expect(world.provider.calls).toBe(0);
        expect(await withdrawals(p.id)).toEqual([{ reason: 'approver_inactive', approver: ada.id }]);
        expect((await engine.proposals.get('acme', p.id))?.approvals.given.map((g) => g.by)).toEqual([
          bob.id,
        ]);
        const third = await approve(carol, p);
        expect(third.kind === 'completed' && third.outcome.kind).toBe('succeeded');
        expect(world.provider.calls).toBe(1);
        const approved = (await engine.audit.events('acme', p.id)).find((e) => e.step === 'approved');
        expect(approved?.detail).toMatchObject({ approvers: [bob.id, carol.id] });
      });

      it('an approver demoted to viewer or moved to another tenant no longer counts (forbidden, approver_inactive)', async () => {
        await openWithDirectory();
        const p = await propose();
        await approve(ada, p);
        await sql.run('UPDATE countersign_operators SET roles = ? WHERE email = ?', [
          'viewer',
          'ada@acme.test',
        ]);
        expect(await approve(bob, p)).toMatchObject({ kind: 'awaiting_approvals', given: [{ by: bob.id }] });
        expect(await withdrawals(p.id)).toEqual([{ reason: 'forbidden', approver: ada.id }]);

        world.invoices.add({
          tenant: 'acme',
          id: 'inv-901',
          supplierName: 'Contoso Freight',
          supplierAccount: 'acct-supplier-9',
          dueMinor: 1_500_000,
          currency: 'USD',
          status: 'open',
        });
        const q = await propose('inv-901');
        await approve(carol, q);
        await sql.run('UPDATE countersign_operators SET tenant = ? WHERE email = ?', [
          'globex',
          'carol@acme.test',
        ]);
        expect(await approve(bob, q)).toMatchObject({ kind: 'awaiting_approvals', given: [{ by: bob.id }] });
        expect(await withdrawals(q.id)).toEqual([{ reason: 'approver_inactive', approver: carol.id }]);
        expect(world.provider.calls).toBe(0);
      });

      it('withdrawLapsedApprovals takes a disabled approver off every pending proposal at once, so "1 of 2" becomes "0 of 2"', async () => {
        await openWithDirectory();
        const p = await propose();
        await approve(ada, p);
        await sql.run('UPDATE countersign_operators SET disabled_at = ? WHERE email = ?', [
          clock.now(),
          'ada@acme.test',
        ]);
        const r = await engine.proposals.withdrawLapsedApprovals({ tenant: 'acme', by: admin.id });
        expect(r).toEqual({ kind: 'checked', withdrawn: 1 });
        expect((await engine.proposals.get('acme', p.id))?.approvals.given).toEqual([]);
        const withdrawn = (await engine.audit.events('acme', p.id)).filter(
          (e) => e.step === 'approval_withdrawn',
        );
        expect(withdrawn.map((e) => [e.actor, e.reason, e.detail['approver']])).toEqual([
          [admin.id, 'approver_inactive', ada.id],
        ]);
        expect(await engine.proposals.withdrawLapsedApprovals({ tenant: 'acme', by: admin.id })).toEqual({
          kind: 'checked',
          withdrawn: 0,
        });
        expect(await engine.proposals.withdrawLapsedApprovals({ tenant: 'globex', by: admin.id })).toEqual({
          kind: 'checked',
          withdrawn: 0,
        });
      });

      it('approvers still in good standing complete the quorum as before', async () => {
        await openWithDirectory();
        const p = await propose();
        await approve(ada, p);
        const done = await approve(bob, p);
        expect(done.kind === 'completed' && done.outcome.kind).toBe('succeeded');
        expect(await withdrawals(p.id)).toEqual([]);
      });
    });

    it('race: 12 distinct approvers at once on a 2-of-N proposal, 5 rounds: one claim, one execution, no lost quorum', async () => {
      for (let round = 0; round < 5; round++) {
        const id = `inv-race-${round}`;
        world.invoices.add({
          tenant: 'acme',
          id,
          supplierName: 'Contoso Freight',
          supplierAccount: 'acct-supplier-9',
          dueMinor: 1_250_000,
          currency: 'USD',
          status: 'open',
        });
        const p = await propose(id);
        const calls = world.provider.calls;
        const results = await Promise.all(approvers(12).map((a) => approve(a, p)));
        const kinds = results.map((r) => r.kind);
        expect(kinds.filter((k) => k === 'completed')).toHaveLength(1);
        expect(kinds.filter((k) => k === 'awaiting_approvals')).toHaveLength(1);
        // Everyone else was told it was already approved (executing: replayed) or done.
        for (const r of results) {
          if (r.kind === 'not_approvable') expect(r.reason).toBe('replayed');
          else expect(['completed', 'awaiting_approvals', 'already_completed']).toContain(r.kind);
        }
        expect(world.provider.calls - calls).toBe(1);
        const done = await engine.proposals.get('acme', p.id);
        expect(done?.status).toBe('succeeded');
        expect(done?.approvals.given).toHaveLength(2);
        expect((await steps(p.id)).filter((s) => s === 'claimed')).toHaveLength(1);
        const rows = await sql.all('SELECT COUNT(*) AS n FROM countersign_attempts WHERE proposal_id = ?', [
          p.id,
        ]);
        expect(Number(rows[0]?.['n'])).toBe(1);
      }
    });

    it('race: the completing approval against a decline, and against an edit: one wins, never both', async () => {
      for (let round = 0; round < 4; round++) {
        const p = await propose();
        await approve(ada, p);
        const calls = world.provider.calls;
        const [approved, declined] = await Promise.all([
          approve(bob, p),
          engine.proposals.decline({ tenant: 'acme', proposalId: p.id, actor: carol }),
        ]);
        const status = (await engine.proposals.get('acme', p.id))?.status;
        if (approved.kind === 'completed') {
          expect(declined).toMatchObject({ kind: 'not_declinable', reason: 'replayed' });
          expect(status).toBe('succeeded');
          expect(world.provider.calls - calls).toBe(1);
          // Reopen the invoice for the next round.
          world.invoices.find('acme', 'inv-105')!.status = 'open';
        } else {
          expect(approved).toMatchObject({ kind: 'not_approvable', reason: 'declined' });
          expect(declined.kind).toBe('declined');
          expect(status).toBe('declined');
          expect(world.provider.calls).toBe(calls);
        }
      }
      for (let round = 0; round < 4; round++) {
        const p = await propose();
        await approve(ada, p);
        const calls = world.provider.calls;
        const [approved, edited] = await Promise.all([
          approve(bob, p),
          engine.proposals.edit({
            tenant: 'acme',
            proposalId: p.id,
            editor: carol,
            changes: { invoice_id: 'inv-105' },
          }),
        ]);
        if (approved.kind === 'completed') {
          expect(edited).toMatchObject({ kind: 'not_editable' });
          expect(world.provider.calls - calls).toBe(1);
          world.invoices.find('acme', 'inv-105')!.status = 'open';
        } else {
          expect(approved).toMatchObject({ kind: 'not_approvable', reason: 'superseded' });
          expect(edited.kind).toBe('edited');
          expect(world.provider.calls).toBe(calls);
          if (edited.kind === 'edited') {
            expect(edited.proposal.approvals.given).toEqual([]);
            await engine.proposals.decline({ tenant: 'acme', proposalId: edited.proposal.id, actor: ada });
          }
        }
      }
    });
  });
}
