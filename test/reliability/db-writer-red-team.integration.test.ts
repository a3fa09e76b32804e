import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DemoWorld, demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { type Actor, createEngine, type Engine, verifyAudit } from '../../src/index.js';
import type { GrantInput } from '../../src/engine/index.js';
import type { Store } from '../../src/store/store.js';
import { agent, approver, draftRows, ManualClock } from '../support/engine.js';
import { BACKENDS, type Backend, createBackend, type RawSql } from '../support/backends.js';

// A database writer (SECURITY.md) can run any SQL against the store but does not hold the seal
// key. Every tamper below must be refused with a named reason, never honoured.
const SEAL_KEY = 'k'.repeat(48);
const HOUR = 3_600_000;
const admin: Actor = { id: 'user:admin@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };
const ada = approver('acme', 'ada');
const bob = approver('acme', 'bob');

for (const name of BACKENDS) {
  describe(`a database writer without the seal key (${name})`, () => {
    let backend: Backend;
    let store: Store;
    let sql: RawSql;
    let engine: Engine;
    let world: DemoWorld;
    let clock: ManualClock;
    let runs = 0;

    beforeEach(async () => {
      backend = await createBackend(name);
      world = demoWorld();
      for (let i = 0; i < 10; i++) {
        world.invoices.add({
          tenant: 'acme',
          id: `inv-s-${i}`,
          supplierName: 'Supplier',
          supplierAccount: 'acct-supplier-1',
          dueMinor: 5_000,
          currency: 'USD',
          status: 'open',
        });
      }
      clock = new ManualClock();
      store = await backend.open();
      engine = await createEngine({ store, operations: demoOperations(world), clock, sealKey: SEAL_KEY });
      sql = await backend.sql();
    });
    afterEach(async () => {
      await engine.close();
      await sql.close();
      await backend.dispose();
    });

    const propose = async (invoice: string, requestedBy = agent().id) => {
      const r = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: invoice },
        tenant: 'acme',
        requestedBy,
        runId: `run-${runs++}`,
      });
      if (r.kind !== 'proposed') throw new Error(`expected proposed, got ${r.kind}`);
      return r;
    };
    const createGrant = async (overrides: Partial<GrantInput> = {}) => {
      const r = await engine.grants.create({
        tenant: 'acme',
        grantedBy: admin,
        subject: agent().id,
        operations: ['invoice.pay'],
        resource: 'invoice:*',
        constraints: { amount_minor: { max: 10_000 }, currency: { equals: 'USD' } },
        cap: { field: 'amount_minor', total: 10_000, uses: 2 },
        expiresAt: clock.now() + HOUR,
        ...overrides,
      });
      if (r.kind !== 'granted') throw new Error(JSON.stringify(r));
      return r.grant;
    };
    const expectCorruptGrant = async (
      grantId: string,
      invoice: string,
      detail = `grant ${grantId} is not sealed by this server`,
    ) => {
      const calls = world.provider.calls;
      const r = await propose(invoice);
      expect(r.grant).toMatchObject({ kind: 'refused', reason: 'corrupt_approval_record', grantId });
      expect(r.grant?.kind === 'refused' && r.grant.detail).toBe(detail);
      expect(r.proposal.status).toBe('pending');
      expect(world.provider.calls).toBe(calls);
      const denied = (await engine.audit.events('acme', r.proposal.id)).find((e) => e.step === 'denied');
      expect(denied).toMatchObject({ reason: 'corrupt_approval_record', actor: `grant:${grantId}` });
    };

    it('a sealed grant still approves within its caps, then is grant_exhausted; spends and a revocation reseal it (never corrupt_approval_record)', async () => {
      const grant = await createGrant();
      for (const invoice of ['inv-s-0', 'inv-s-1'])
        expect((await propose(invoice)).grant).toMatchObject({
          kind: 'approved_by_grant',
          grantId: grant.id,
        });
      expect(world.provider.calls).toBe(2);
      expect((await propose('inv-s-2')).grant).toMatchObject({ kind: 'refused', reason: 'grant_exhausted' });
      const other = await createGrant({ cap: { uses: 5 } });
      expect(await engine.grants.revoke({ tenant: 'acme', grantId: other.id, actor: admin })).toEqual({
        kind: 'revoked',
      });
      // The revocation rewrote the seal: the revoked grant is refused as revoked, not as corrupt.
      const after = await propose('inv-s-3');
      expect(after.grant).toMatchObject({ kind: 'refused', reason: 'grant_exhausted', grantId: grant.id });
      const denials = (await engine.audit.events('acme', after.proposal.id)).filter(
        (e) => e.step === 'denied',
      );
      expect(denials.map((e) => e.reason)).toEqual(['grant_exhausted']);
      expect(world.provider.calls).toBe(2);
    });

    it('a grant row inserted by hand (a copy of a real one under a new id, or unsealed) approves nothing', async () => {
      const real = await createGrant({ subject: 'agent:acme-other' });
      await sql.run(
        `INSERT INTO countersign_grants (tenant, id, subject, operations_json, resource, constraints_json, cap_field, cap_total, cap_uses, used_count, used_total, expires_at, created_at, created_by, revoked_at, revoked_by, note, satisfies_quorum, seal)
         SELECT tenant, 'grt_forged', ?, operations_json, resource, constraints_json, cap_field, cap_total, cap_uses, used_count, used_total, expires_at, created_at, created_by, revoked_at, revoked_by, note, satisfies_quorum, seal FROM countersign_grants WHERE id = ?`,
        [agent().id, real.id],
      );
      await expectCorruptGrant('grt_forged', 'inv-s-0');
      await sql.run('UPDATE countersign_grants SET seal = NULL WHERE id = ?', ['grt_forged']);
      await expectCorruptGrant('grt_forged', 'inv-s-1');
    });

    const tampers: readonly (readonly [string, string, readonly unknown[], (g: string) => Promise<void>])[] =
      [
        [
          'cap_total raised',
          'UPDATE countersign_grants SET cap_total = ?, cap_uses = NULL WHERE id = ?',
          [10 ** 9],
          spendAll,
        ],
        ['cap_uses cleared', 'UPDATE countersign_grants SET cap_uses = NULL WHERE id = ?', [], spendAll],
        [
          'used_count and used_total reset',
          'UPDATE countersign_grants SET used_count = 0, used_total = 0 WHERE id = ?',
          [],
          spendAll,
        ],
        [
          'expires_at extended',
          'UPDATE countersign_grants SET expires_at = ? WHERE id = ?',
          [Date.UTC(2099, 0, 1)],
          expire,
        ],
        [
          'revoked_at cleared',
          'UPDATE countersign_grants SET revoked_at = NULL, revoked_by = NULL WHERE id = ?',
          [],
          revokeIt,
        ],
        ['subject changed', 'UPDATE countersign_grants SET subject = ? WHERE id = ?', [agent().id], nothing],
        [
          'operations_json widened',
          'UPDATE countersign_grants SET operations_json = ? WHERE id = ?',
          ['["invoice.pay","order.refund"]'],
          nothing,
        ],
        [
          'constraints_json loosened',
          'UPDATE countersign_grants SET constraints_json = ? WHERE id = ?',
          ['{"currency":{"equals":"USD"}}'],
          nothing,
        ],
        [
          'resource widened',
          'UPDATE countersign_grants SET resource = ? WHERE id = ?',
          ['invoice:*'],
          nothing,
        ],
        [
          'satisfies_quorum set',
          'UPDATE countersign_grants SET satisfies_quorum = ? WHERE id = ?',
          [1],
          nothing,
        ],
      ];
    async function spendAll(grantId: string) {
      for (const invoice of ['inv-s-7', 'inv-s-8'])
        expect((await propose(invoice)).grant).toMatchObject({ kind: 'approved_by_grant', grantId });
    }
    async function expire() {
      clock.advance(2 * HOUR);
    }
    async function revokeIt(grantId: string) {
      expect((await engine.grants.revoke({ tenant: 'acme', grantId, actor: admin })).kind).toBe('revoked');
    }
    async function nothing() {}

    it.each(tampers)('a grant whose %s is corrupt_approval_record', async (_what, update, params, before) => {
      // A grant the writer wants to use: spent, expired, revoked, or one for someone or something else.
      const narrow = _what === 'subject changed' ? { subject: 'agent:acme-other' } : {};
      const scoped =
        _what === 'resource widened'
          ? { resource: 'invoice:inv-elsewhere' }
          : _what === 'constraints_json loosened'
            ? { constraints: { amount_minor: { max: 1 } } }
            : {};
      const grant = await createGrant({ ...narrow, ...scoped });
      await before(grant.id);
      const calls = world.provider.calls;
      expect(await sql.run(update, [...params, grant.id])).toBe(1);
      await expectCorruptGrant(grant.id, 'inv-s-0');
      expect(world.provider.calls).toBe(calls);
    });

    // A rollback: the writer saves a grant row while it is still useful and writes it back later.
    // The copy is genuine (its seal verifies); only the audit still holds what happened since.
    const GRANT_STATE = 'used_count, used_total, revoked_at, revoked_by, seal';
    const saveGrant = async (grantId: string) =>
      (await sql.all(`SELECT ${GRANT_STATE} FROM countersign_grants WHERE id = ?`, [grantId]))[0]!;
    const writeBack = async (grantId: string, saved: Record<string, unknown>) =>
      expect(
        await sql.run(
          'UPDATE countersign_grants SET used_count = ?, used_total = ?, revoked_at = ?, revoked_by = ?, seal = ? WHERE id = ?',
          [
            saved['used_count'],
            saved['used_total'],
            saved['revoked_at'],
            saved['revoked_by'],
            saved['seal'],
            grantId,
          ],
        ),
      ).toBe(1);

    const expectApprovedByGrant = async (invoice: string, grantId: string) =>
      expect((await propose(invoice)).grant).toMatchObject({ kind: 'approved_by_grant', grantId });

    it('an exhausted grant written back to its sealed copy from 1 of 3 uses approves nothing: corrupt_approval_record', async () => {
      const grant = await createGrant({ cap: { uses: 3 } });
      await expectApprovedByGrant('inv-s-0', grant.id);
      const saved = await saveGrant(grant.id);
      for (const invoice of ['inv-s-1', 'inv-s-2']) await expectApprovedByGrant(invoice, grant.id);
      expect((await propose('inv-s-3')).grant).toMatchObject({
        kind: 'refused',
        reason: 'grant_exhausted',
        grantId: grant.id,
      });
      expect(world.provider.calls).toBe(3);
      await writeBack(grant.id, saved);
      // The copy is genuine: its seal verifies, and it reads as 1 of 3 again.
      expect((await engine.grants.get('acme', grant.id))?.usage.uses).toBe(1);
      const detail = `grant ${grant.id} approved 3 proposals by its audit, but its row counts 1 uses: an earlier copy was written back`;
      await expectCorruptGrant(grant.id, 'inv-s-4', detail);
      await expectCorruptGrant(grant.id, 'inv-s-5', detail);
      expect(world.provider.calls).toBe(3);
    });

    it('a grant approval forged into the audit only makes its grant refuse (corrupt_approval_record), and audit verify names the forged event', async () => {
      const grant = await createGrant({ cap: { uses: 3 } });
      await expectApprovedByGrant('inv-s-0', grant.id);
      const [genuine] = await sql.all(
        "SELECT * FROM countersign_audit_events WHERE actor = ? AND reason = 'approved_by_grant'",
        [`grant:${grant.id}`],
      );
      // A copy of the genuine approval under another id, placed past the chain's end (a place the
      // next append would take is another attack: the append then fails on the sequence).
      const forgedId = 'evt_forgedgrantapproval000000';
      const columns = Object.keys(genuine!);
      const values = columns.map((c) =>
        c === 'id' ? forgedId : c === 'seq' ? Number(genuine!['seq']) + 1000 : genuine![c],
      );
      expect(
        await sql.run(
          `INSERT INTO countersign_audit_events (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          values,
        ),
      ).toBe(1);
      await expectCorruptGrant(
        grant.id,
        'inv-s-1',
        `grant ${grant.id} approved 2 proposals by its audit, but its row counts 1 uses: an earlier copy was written back`,
      );
      expect(world.provider.calls).toBe(1);
      const verified = await verifyAudit(store, { sealKey: SEAL_KEY });
      expect(verified).toMatchObject({ kind: 'broken', tenant: 'acme' });
      expect(verified.kind === 'broken' && [verified.eventId, verified.problem]).toEqual([
        forgedId,
        'sequence_gap',
      ]);
    });

    it('a revoked grant written back to its sealed copy from before the revocation approves nothing: corrupt_approval_record', async () => {
      const grant = await createGrant({ cap: { uses: 5 } });
      await expectApprovedByGrant('inv-s-0', grant.id);
      const saved = await saveGrant(grant.id);
      expect(await engine.grants.revoke({ tenant: 'acme', grantId: grant.id, actor: admin })).toEqual({
        kind: 'revoked',
      });
      expect((await propose('inv-s-1')).grant).toMatchObject({
        kind: 'refused',
        reason: 'grant_revoked',
        grantId: grant.id,
      });
      await writeBack(grant.id, saved);
      expect((await engine.grants.get('acme', grant.id))?.state).toBe('live');
      await expectCorruptGrant(
        grant.id,
        'inv-s-2',
        `grant ${grant.id} was revoked by its audit, but its row is not: an earlier copy was written back`,
      );
      expect(world.provider.calls).toBe(1);
    });

    it('an untouched grant approves up to its cap beside a rolled-back one, then is grant_exhausted', async () => {
      const rolled = await createGrant({ cap: { uses: 1 }, subject: 'agent:acme-other' });
      const saved = await saveGrant(rolled.id);
      expect((await propose('inv-s-9', 'agent:acme-other')).grant).toMatchObject({
        kind: 'approved_by_grant',
        grantId: rolled.id,
      });
      await writeBack(rolled.id, saved);
      const grant = await createGrant({ cap: { uses: 3 } });
      for (const invoice of ['inv-s-0', 'inv-s-1', 'inv-s-2'])
        expect((await propose(invoice)).grant).toMatchObject({
          kind: 'approved_by_grant',
          grantId: grant.id,
          outcome: { kind: 'succeeded' },
        });
      expect(world.provider.calls).toBe(4);
      const last = await propose('inv-s-3');
      expect(last.grant).toMatchObject({ kind: 'refused', reason: 'grant_exhausted', grantId: grant.id });
      const denials = (await engine.audit.events('acme', last.proposal.id)).filter(
        (e) => e.step === 'denied',
      );
      expect(denials.map((e) => e.reason)).toEqual(['grant_exhausted']);
      expect(world.provider.calls).toBe(4);
      expect((await engine.grants.get('acme', grant.id))?.usage.uses).toBe(3);
    });

    it('concurrent proposals spend a sealed grant exactly to its cap: the audit check never mistakes a concurrent spend for a rollback', async () => {
      for (let i = 0; i < 12; i++)
        world.invoices.add({
          tenant: 'acme',
          id: `inv-c-${i}`,
          supplierName: 'Supplier',
          supplierAccount: 'acct-supplier-1',
          dueMinor: 5_000,
          currency: 'USD',
          status: 'open',
        });
      const grant = await createGrant({ cap: { uses: 5 } });
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => propose(`inv-c-${i}`)));
      const kinds = results.map((r) =>
        r.grant?.kind === 'approved_by_grant'
          ? 'approved_by_grant'
          : r.grant?.kind === 'refused'
            ? r.grant.reason
            : 'none',
      );
      expect(kinds.filter((k) => k === 'approved_by_grant')).toHaveLength(5);
      expect(kinds.filter((k) => k !== 'approved_by_grant')).toEqual(Array(7).fill('grant_exhausted'));
      expect(world.provider.calls).toBe(5);
      expect((await engine.grants.get('acme', grant.id))?.usage.uses).toBe(5);
    });

    // The writer copies the tenant's newest event under a new id to the place its chain takes next
    // (the head's seq + 1): every call that records in the tenant must then be refused by name.
    const FORGED = 'evt_forgednextplace000000000';
    const forgeNextEvent = async () => {
      // The engine's calls return at commit; its store's reads wait until what they queued is chained.
      await store.read((tx) => tx.auditHead('acme'));
      const [head] = await sql.all('SELECT seq FROM countersign_audit_heads WHERE tenant = ?', ['acme']);
      const seq = Number(head!['seq']) + 1;
      const [newest] = await sql.all('SELECT * FROM countersign_audit_events WHERE tenant = ? AND seq = ?', [
        'acme',
        seq - 1,
      ]);
      const columns = Object.keys(newest!);
      const values = columns.map((c) => (c === 'id' ? FORGED : c === 'seq' ? seq : newest![c]));
      expect(
        await sql.run(
          `INSERT INTO countersign_audit_events (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
          values,
        ),
      ).toBe(1);
      return seq;
    };
    const counts = async () => {
      const count = async (table: string) =>
        Number((await sql.all(`SELECT count(*) AS n FROM ${table}`))[0]!['n']);
      return {
        proposals: await count('countersign_proposals'),
        attempts: await count('countersign_attempts'),
        grants: await count('countersign_grants'),
        events: await count('countersign_audit_events'),
        queued: await count('countersign_audit_queue'),
        head: Number(
          (await sql.all("SELECT seq FROM countersign_audit_heads WHERE tenant = 'acme'"))[0]!['seq'],
        ),
      };
    };
    const expectForgedNamed = async (seq: number) => {
      const verified = await verifyAudit(store, { sealKey: SEAL_KEY });
      expect(verified.kind === 'broken' && [verified.seq, verified.eventId, verified.problem]).toEqual([
        seq,
        FORGED,
        'leaf_mismatch',
      ]);
    };
    // The human's side: approve the pending proposal by the digest shown, and execute.
    const approvePending = (pending: { readonly id: string; readonly digest: string }) =>
      engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: pending.id,
        approver: ada,
        seenDigest: pending.digest,
      });

    it('an event inserted where the audit chain goes next refuses a proposal and an approval (corrupt_audit_chain): nothing stored, nothing executed, and audit verify names the event', async () => {
      const pending = (await propose('inv-s-0')).proposal;
      const seq = await forgeNextEvent();
      const before = await counts();
      const refused = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-s-1' },
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-forged',
      });
      expect(refused).toMatchObject({ kind: 'corrupt_audit_chain', reason: 'corrupt_audit_chain' });
      expect(refused.kind === 'corrupt_audit_chain' && refused.message).toContain(`#${seq}`);
      const approved = await approvePending(pending);
      expect(approved).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_audit_chain' });
      // Rolled back whole: no proposal, no claim, no attempt, no event, the head where it was.
      expect(await counts()).toEqual(before);
      expect((await engine.proposals.get('acme', pending.id))?.status).toBe('pending');
      expect(world.provider.calls).toBe(0);
      await expectForgedNamed(seq);
      // Once an operator removes the event, the chain takes appends again, intact.
      expect(await sql.run('DELETE FROM countersign_audit_events WHERE id = ?', [FORGED])).toBe(1);
      const paid = await approvePending(pending);
      expect(paid.kind === 'completed' && paid.outcome.kind).toBe('succeeded');
      expect(world.provider.calls).toBe(1);
      expect(await verifyAudit(store, { sealKey: SEAL_KEY })).toMatchObject({ kind: 'intact' });
    });

    it('while the place is taken, every other call that records is refused by name and changes nothing: decline, edit, a grant and its approval, revocation, execution, expiry, recovery', async () => {
      const grant = await createGrant({ subject: 'agent:acme-other' });
      const pending = (await propose('inv-s-0')).proposal;
      const toClaim = (await propose('inv-s-1')).proposal;
      const claimed = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: toClaim.id,
        approver: ada,
        seenDigest: toClaim.digest,
      });
      if (claimed.kind !== 'claimed') throw new Error(`expected claimed, got ${claimed.kind}`);
      // A local effect, which commits with its outcome.
      const draft = await engine.proposals.propose({
        operation: 'email_broadcast.apply_draft',
        request: { broadcast_id: 'bc-spring', subject: 'Hello', body: 'Opening day.' },
        resource: 'broadcast:bc-spring',
        tenant: 'acme',
        requestedBy: agent().id,
        runId: 'run-local',
      });
      if (draft.kind !== 'proposed') throw new Error(`expected proposed, got ${draft.kind}`);
      const local = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: draft.proposal.id,
        approver: ada,
        seenDigest: draft.proposal.digest,
      });
      if (local.kind !== 'claimed') throw new Error(`expected claimed, got ${local.kind}`);
      // Another tenant's proposal, due with acme's: its chain is intact, so it expires all the same.
      const other = await engine.proposals.propose({
        operation: 'invoice.pay',
        request: { invoice_id: 'inv-201' },
        tenant: 'globex',
        requestedBy: 'agent:globex-assistant',
        runId: 'run-globex',
      });
      if (other.kind !== 'proposed') throw new Error(`expected proposed, got ${other.kind}`);
      const seq = await forgeNextEvent();
      const before = await counts();
      const refusal = { reason: 'corrupt_audit_chain' };
      expect(
        await engine.proposals.decline({ tenant: 'acme', proposalId: pending.id, actor: ada }),
      ).toMatchObject({
        kind: 'not_declinable',
        ...refusal,
      });
      expect(
        await engine.proposals.edit({ tenant: 'acme', proposalId: pending.id, editor: ada, changes: {} }),
      ).toMatchObject({ kind: 'not_editable', ...refusal });
      expect(
        await engine.grants.create({
          tenant: 'acme',
          grantedBy: admin,
          subject: agent().id,
          operations: ['invoice.pay'],
          resource: 'invoice:*',
          constraints: { currency: { equals: 'USD' } },
          cap: { uses: 1 },
          expiresAt: clock.now() + HOUR,
        }),
      ).toMatchObject({ kind: 'corrupt_audit_chain', ...refusal });
      // A proposal the live grant covers: neither stored nor approved, the grant unspent.
      expect(
        await engine.proposals.propose({
          operation: 'invoice.pay',
          request: { invoice_id: 'inv-s-2' },
          tenant: 'acme',
          requestedBy: 'agent:acme-other',
          runId: 'run-granted',
        }),
      ).toMatchObject({ kind: 'corrupt_audit_chain', ...refusal });
      expect((await engine.grants.get('acme', grant.id))?.usage.uses).toBe(0);
      expect(await engine.grants.revoke({ tenant: 'acme', grantId: grant.id, actor: admin })).toMatchObject({
        kind: 'not_revocable',
        ...refusal,
      });
      expect((await engine.grants.get('acme', grant.id))?.state).toBe('live');
      // Claimed proposals execute nothing: an external command cannot be recorded before the
      // call, and a local effect rolls back with the outcome it cannot record.
      expect(await engine.proposals.execute(claimed.contract)).toMatchObject({
        kind: 'terminal_failure',
        ...refusal,
      });
      expect(await engine.proposals.execute(local.contract)).toMatchObject({
        kind: 'terminal_failure',
        ...refusal,
      });
      // Not applied: the effect's table, made by its first run, rolled back with it too.
      await expect(draftRows(store)).rejects.toThrow(/example_broadcast_drafts/);
      expect(await counts()).toEqual(before);
      clock.advance(2 * HOUR);
      expect(await engine.sweeps.expireDue()).toBe(1);
      expect(await engine.sweeps.recover()).toMatchObject({ examined: 2, held: 2, rerun: 0 });
      // Only globex's expiry was recorded.
      expect(await counts()).toEqual({ ...before, events: before.events + 1 });
      // As stored (a read shows the pending one past its expiry as expired).
      const status = async (id: string) =>
        (await sql.all('SELECT status FROM countersign_proposals WHERE id = ?', [id]))[0]!['status'];
      expect(await status(pending.id)).toBe('pending');
      expect(await status(claimed.contract.proposalId)).toBe('executing');
      expect(await status(local.contract.proposalId)).toBe('executing');
      expect(await status(other.proposal.id)).toBe('expired');
      expect(world.provider.calls).toBe(0);
      await expectForgedNamed(seq);
    });

    it('a deleted chain head makes every call that records refuse by name (corrupt_audit_chain), never a second event #1 or a 500; restoring the head resumes the chain', async () => {
      const pending = (await propose('inv-s-0')).proposal;
      // This process reads its own events chained (the engine's calls return at commit).
      const head = await store.read((tx) => tx.auditHead('acme'));
      expect(head?.seq).toBeGreaterThan(0);
      expect(await sql.run('DELETE FROM countersign_audit_heads WHERE tenant = ?', ['acme'])).toBe(1);
      const proposals = async () =>
        Number((await sql.all('SELECT count(*) AS n FROM countersign_proposals'))[0]!['n']);
      const before = await proposals();
      expect(
        await engine.proposals.propose({
          operation: 'invoice.pay',
          request: { invoice_id: 'inv-s-1' },
          tenant: 'acme',
          requestedBy: agent().id,
          runId: 'run-headless',
        }),
      ).toMatchObject({ kind: 'corrupt_audit_chain', reason: 'corrupt_audit_chain' });
      expect(await approvePending(pending)).toMatchObject({
        kind: 'not_approvable',
        reason: 'corrupt_audit_chain',
      });
      expect(await proposals()).toBe(before);
      expect((await engine.proposals.get('acme', pending.id))?.status).toBe('pending');
      expect(world.provider.calls).toBe(0);
      // One event #1, the genuine one; nothing queued to be chained onto a second.
      expect(
        (await sql.all("SELECT id FROM countersign_audit_events WHERE tenant = 'acme' AND seq = 1")).length,
      ).toBe(1);
      expect(await sql.all("SELECT n FROM countersign_audit_queue WHERE tenant = 'acme'")).toEqual([]);
      // Audit verify names the removed head, where the operator is told to look.
      expect(await verifyAudit(store, { sealKey: SEAL_KEY })).toMatchObject({
        kind: 'broken',
        tenant: 'acme',
        seq: head!.seq + 1,
        problem: 'head_mismatch',
      });
      // An operator puts the head back where the chain ends: appends resume, the chain intact.
      await sql.run('INSERT INTO countersign_audit_heads (tenant, seq, chain_hash) VALUES (?, ?, ?)', [
        'acme',
        head!.seq,
        head!.chainHash,
      ]);
      const paid = await approvePending(pending);
      expect(paid.kind === 'completed' && paid.outcome.kind).toBe('succeeded');
      expect(world.provider.calls).toBe(1);
      expect(await verifyAudit(store, { sealKey: SEAL_KEY })).toMatchObject({ kind: 'intact' });
    });

    it('a finished proposal set back to pending by hand is replayed, never executed again', async () => {
      const p = (await propose('inv-104')).proposal;
      const first = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: ada,
        seenDigest: p.digest,
      });
      expect(first.kind === 'completed' && first.outcome.kind).toBe('succeeded');
      expect(world.provider.calls).toBe(1);
      // Reopen the invoice, so only the store can stop a second payment.
      world.invoices.add({ ...world.invoices.find('acme', 'inv-104')!, status: 'open' });
      await sql.run(
        "UPDATE countersign_proposals SET status = 'pending', outcome_json = NULL, decided_by = NULL, decided_at = NULL, approval_kind = NULL WHERE id = ?",
        [p.id],
      );
      const again = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: bob,
        seenDigest: p.digest,
      });
      expect(again).toMatchObject({ kind: 'not_approvable', reason: 'replayed' });
      // With the attempt counter reset too, the recorded attempt 1 still blocks the claim, by name.
      await sql.run('UPDATE countersign_proposals SET current_attempt = 0 WHERE id = ?', [p.id]);
      expect(
        await engine.proposals.approveAndExecute({
          tenant: 'acme',
          proposalId: p.id,
          approver: bob,
          seenDigest: p.digest,
        }),
      ).toMatchObject({ kind: 'not_approvable', reason: 'corrupt_approval_record' });
      const denied = await store.read((tx) => tx.listAudit('acme', { proposalId: p.id, limit: 50 }));
      expect(denied.at(-1)).toMatchObject({
        step: 'denied',
        reason: 'corrupt_approval_record',
        actor: bob.id,
      });
      expect((await engine.proposals.get('acme', p.id))?.status).toBe('pending');
      expect(world.provider.calls).toBe(1);
      const attempts = await sql.all('SELECT number FROM countersign_attempts WHERE proposal_id = ?', [p.id]);
      expect(attempts.map((a) => Number(a['number']))).toEqual([1]);
    });
  });
}
