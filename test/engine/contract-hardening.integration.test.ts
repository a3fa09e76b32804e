import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld, type DemoWorld } from '../../src/demo/demo-world.js';
import { z } from 'zod';
import {
  type Actor,
  createEngine,
  defineOperation,
  type Engine,
  type EngineOptions,
} from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type Backend, createBackend, type RawSql } from '../support/backends.js';
import { agent, approver, ManualClock, proposeDraft, proposePayment } from '../support/engine.js';

const admin = (tenant = 'acme'): Actor => ({
  id: `user:admin@${tenant}.test`,
  tenant,
  kind: 'operator',
  roles: ['admin'],
});
const bob = approver('acme', 'bob');
const SEAL_KEY = 'k'.repeat(48);

// Each hole of the hardening issue on both stores: a real SQLite file and a real PostgreSQL server.
for (const name of BACKENDS) {
  describe(`the contract holds against an agent, an editor and a database writer (${name})`, () => {
    let backend: Backend;
    let store: Store;
    let sql: RawSql;
    let engine: Engine;
    let world: DemoWorld;
    let clock: ManualClock;

    const open = async (options: Partial<EngineOptions> = {}) => {
      await engine?.close();
      store = await backend.open();
      engine = await createEngine({ store, operations: demoOperations(world), clock, ...options });
    };
    const proposeInPayables = async () => {
      const r = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104' },
        tenant: 'acme',
        section: 'payables',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      if (r.kind !== 'proposed') throw new Error(`expected proposed, got ${r.kind}`);
      return r.proposal;
    };
    const auditCount = async (proposalId: string) => (await engine.audit.events('acme', proposalId)).length;

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

    it('a label the agent writes with a NUL or a lone surrogate is invalid_request on every backend, and nothing is stored', async () => {
      const labels = [
        { section: 'pay\u0000ables' },
        { section: 'pay\ud800ables' },
        { runId: 'run-\u0000' },
        { runId: 'run-\udc00' },
      ];
      for (const label of labels) {
        const r = await engine.proposals.propose({
          operation: 'invoice.pay',
          request: { invoice_id: 'inv-104' },
          tenant: 'acme',
          requestedBy: agent().id,
          runId: 'run-1',
          ...label,
        });
        expect([JSON.stringify(label), r.kind]).toEqual([JSON.stringify(label), 'invalid_request']);
      }
      expect((await engine.proposals.list('acme')).items).toEqual([]);
      expect(await sql.all('SELECT id FROM countersign_audit_events')).toEqual([]);
    });

    it("a grant's resource bound holds against the resource the operation derives, not the agent's label", async () => {
      const granted = await engine.grants.create({
        tenant: 'acme',
        grantedBy: admin(),
        subject: agent().id,
        operations: ['invoice.pay'],
        resource: 'invoice:inv-107',
        constraints: { currency: { equals: 'USD' } },
        cap: { uses: 1 },
        expiresAt: clock.now() + 3_600_000,
      });
      expect(granted.kind).toBe('granted');
      // The agent labels a payment of inv-104 as inv-107: refused before anything is stored.
      const labelled = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104' },
        tenant: 'acme',
        resource: 'invoice:inv-107',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(labelled).toMatchObject({ kind: 'invalid_request', reason: 'resource_mismatch' });
      expect((await engine.proposals.list('acme')).items).toHaveLength(0);
      // Without a label it is stored under its own resource, and the grant does not cover it.
      const unlabelled = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-104' },
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(unlabelled.kind === 'proposed' && unlabelled.proposal.resource).toBe('invoice:inv-104');
      expect(unlabelled.kind === 'proposed' && unlabelled.grant).toMatchObject({
        kind: 'refused',
        reason: 'outside_grant',
      });
      expect(world.provider.calls).toBe(0);
      // A boundary label (`invoice:*`) is accepted; the grant covers inv-107 alone.
      const covered = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-107' },
        tenant: 'acme',
        resource: 'invoice:*',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(covered.kind === 'proposed' && covered.grant?.kind).toBe('approved_by_grant');
      expect(world.provider.calls).toBe(1);
    });

    it('a grant cannot cover an operation that does not name its resource', async () => {
      const unnamed = defineOperation({
        kind: 'note.add',
        scopeVersion: 1,
        scope: z.strictObject({ tenant: z.string(), operation: z.literal('note.add'), text: z.string() }),
        request: z.strictObject({ text: z.string() }),
        arguments: z.strictObject({ text: z.string() }),
        prepare: async (r) => ({ arguments: r, preview: r }),
        execute: async () => ({}),
      });
      await engine.close();
      store = await backend.open();
      engine = await createEngine({ store, operations: [unnamed], clock });
      const granted = await engine.grants.create({
        tenant: 'acme',
        grantedBy: admin(),
        subject: agent().id,
        operations: ['note.add'],
        resource: 'note:n-1',
        constraints: {},
        cap: { uses: 5 },
        expiresAt: clock.now() + 3_600_000,
      });
      expect(granted.kind).toBe('invalid_grant');
      expect(granted.kind === 'invalid_grant' && granted.issues[0]?.path).toBe('$.operations[0]');
      // Without a resource from the caller it is a request the caller can correct, never a throw.
      const unlabelled = await engine.proposals.propose({
        operation: 'note.add',
        request: { text: 'hi' },
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-1',
      });
      expect(unlabelled).toMatchObject({ kind: 'invalid_request', reason: 'invalid_request' });
      expect(unlabelled.kind === 'invalid_request' && unlabelled.issues[0]?.path).toBe('$.resource');
    });

    it('a malformed seenDigest is invalid_digest and writes nothing; the proposal still reads', async () => {
      const p = await proposePayment(engine);
      const before = await auditCount(p.id);
      for (const seenDigest of [p.short, '<script>alert(1)</script>', p.digest.toUpperCase(), '']) {
        const r = await engine.proposals.approve({
          tenant: 'acme',
          proposalId: p.id,
          approver: approver(),
          seenDigest,
        });
        expect(r).toMatchObject({ kind: 'not_approvable', reason: 'invalid_digest' });
      }
      expect(await auditCount(p.id)).toBe(before);
      const done = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: approver(),
        seenDigest: p.digest,
      });
      expect(done.kind === 'completed' && done.outcome.kind).toBe('succeeded');
    });

    it('a replay with another digest is stale_view; with the approved digest it returns the stored outcome', async () => {
      const p = await proposePayment(engine);
      await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: approver(),
        seenDigest: p.digest,
      });
      const other = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: p.id,
        approver: approver(),
        seenDigest: 'f'.repeat(64),
      });
      expect(other).toMatchObject({ kind: 'not_approvable', reason: 'stale_view' });
      const same = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: p.id,
        approver: approver(),
        seenDigest: p.digest,
      });
      expect(same.kind === 'already_completed' && same.outcome.kind).toBe('succeeded');
      expect(world.provider.calls).toBe(1);
    });

    it('the editor does not approve their own edit: separation_of_duties; another approver does', async () => {
      const p = await proposeDraft(engine);
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: p.id,
        editor: approver(),
        changes: { subject: 'Season opens Saturday' },
      });
      if (edited.kind !== 'edited') throw new Error(edited.kind);
      expect(edited.proposal.editedBy).toBe(approver().id);
      expect(edited.proposal.requestedBy).toBe(agent().id);
      const own = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: edited.proposal.id,
        approver: approver(),
        seenDigest: edited.proposal.digest,
      });
      expect(own).toMatchObject({ kind: 'not_approvable', reason: 'separation_of_duties' });
      const other = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: edited.proposal.id,
        approver: bob,
        seenDigest: edited.proposal.digest,
      });
      expect(other.kind === 'completed' && other.outcome.kind).toBe('succeeded');
    });

    it("with allowEditorApproval the editor's approval is allowed and audited as such", async () => {
      await open({ allowEditorApproval: true });
      const p = await proposeDraft(engine);
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: p.id,
        editor: approver(),
        changes: { subject: 'Season opens Saturday' },
      });
      if (edited.kind !== 'edited') throw new Error(edited.kind);
      const own = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: edited.proposal.id,
        approver: approver(),
        seenDigest: edited.proposal.digest,
      });
      expect(own.kind).toBe('claimed');
      const approved = (await engine.audit.events('acme', edited.proposal.id)).find(
        (e) => e.step === 'approved',
      );
      expect(approved?.detail).toMatchObject({ editorApproval: true });
    });

    it('the editor cannot clear their name in the database: editedBy is in the digest', async () => {
      const p = await proposeDraft(engine);
      const edited = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: p.id,
        editor: approver(),
        changes: { subject: 'Season opens Saturday' },
      });
      if (edited.kind !== 'edited') throw new Error(edited.kind);
      await sql.run('UPDATE countersign_proposals SET edited_by = NULL WHERE id = ?', [edited.proposal.id]);
      const r = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: edited.proposal.id,
        approver: approver(),
        seenDigest: edited.proposal.digest,
      });
      expect(r).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
    });

    it('the section is part of the contract: a changed section is corrupt_approval_record, sealed or not', async () => {
      for (const sealKey of [undefined, SEAL_KEY]) {
        await open(sealKey ? { sealKey } : {});
        const r = { proposal: await proposeInPayables() };
        await sql.run("UPDATE countersign_proposals SET section = 'treasury' WHERE id = ?", [r.proposal.id]);
        const approved = await engine.proposals.approve({
          tenant: 'acme',
          proposalId: r.proposal.id,
          approver: approver(),
          seenDigest: r.proposal.digest,
        });
        expect(approved).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
      }
      expect(world.provider.calls).toBe(0);
    });

    it('a record rewritten to claim stored format 1 (whose digest ignores the section) is refused', async () => {
      const r = { proposal: await proposeInPayables() };
      await sql.run(
        "UPDATE countersign_proposals SET format_version = 1, section = 'treasury' WHERE id = ?",
        [r.proposal.id],
      );
      const approved = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: r.proposal.id,
        approver: approver(),
        seenDigest: r.proposal.digest,
      });
      expect(approved).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
    });

    it('approve asserts the section and resource the approver expects', async () => {
      const r = { proposal: await proposeInPayables() };
      const base = {
        tenant: 'acme',
        proposalId: r.proposal.id,
        approver: approver(),
        seenDigest: r.proposal.digest,
      };
      expect(await engine.proposals.approve({ ...base, expectedSection: 'treasury' })).toMatchObject({
        reason: 'section_mismatch',
      });
      expect(await engine.proposals.approve({ ...base, expectedSection: null })).toMatchObject({
        reason: 'section_mismatch',
      });
      expect(await engine.proposals.approve({ ...base, expectedResource: 'invoice:inv-105' })).toMatchObject({
        reason: 'resource_mismatch',
      });
      const ok = await engine.proposals.approve({
        ...base,
        expectedSection: 'payables',
        expectedResource: 'invoice:inv-104',
      });
      expect(ok.kind).toBe('claimed');
    });

    it('a pending proposal past its expiry reads expired before the sweep, in get and list', async () => {
      const p = await proposePayment(engine);
      clock.advance(30 * 60_000);
      expect((await engine.proposals.get('acme', p.id))?.status).toBe('expired');
      expect((await engine.proposals.list('acme')).items.map((i) => i.status)).toEqual(['expired']);
    });
  });
}
