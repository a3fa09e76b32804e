import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type DemoWorld, demoOperations, demoWorld } from '../../examples/index.js';
import { type Actor, createEngine, type Engine, type GrantInput, verifyAudit } from '../../src/index.js';
import type { Store } from '../../src/store/store.js';
import { agent, approver, ManualClock } from '../support/engine.js';
import { BACKENDS, type Backend, createBackend, type RawSql } from './support/backends.js';

// A database writer (SECURITY.md) can run any SQL against the store but does not hold the seal
// key. Every tamper below must be refused with a named reason, never honoured.
const SEAL_KEY = 'k'.repeat(48);
const HOUR = 3_600_000;
const admin: Actor = { id: 'user:admin@acme.test', tenant: 'acme', kind: 'operator', roles: ['admin'] };
const ada = approver('acme', 'ada');
const bob = approver('acme', 'bob');

for (const { name, skip } of BACKENDS) {
  describe.skipIf(skip)(`a database writer without the seal key (${name})`, () => {
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
      const r = await engine.propose({
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
      const r = await engine.grant({
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
      const denied = (await engine.audit('acme', r.proposal.id)).find((e) => e.step === 'denied');
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
      expect(await engine.revoke({ tenant: 'acme', grantId: other.id, actor: admin })).toEqual({
        kind: 'revoked',
      });
      // The revocation rewrote the seal: the revoked grant is refused as revoked, not as corrupt.
      const after = await propose('inv-s-3');
      expect(after.grant).toMatchObject({ kind: 'refused', reason: 'grant_exhausted', grantId: grant.id });
      const denials = (await engine.audit('acme', after.proposal.id)).filter((e) => e.step === 'denied');
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
      expect((await engine.revoke({ tenant: 'acme', grantId, actor: admin })).kind).toBe('revoked');
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
      expect((await engine.getGrant('acme', grant.id))?.usage.uses).toBe(1);
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
      expect(await engine.revoke({ tenant: 'acme', grantId: grant.id, actor: admin })).toEqual({
        kind: 'revoked',
      });
      expect((await propose('inv-s-1')).grant).toMatchObject({
        kind: 'refused',
        reason: 'grant_revoked',
        grantId: grant.id,
      });
      await writeBack(grant.id, saved);
      expect((await engine.getGrant('acme', grant.id))?.state).toBe('live');
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
      const denials = (await engine.audit('acme', last.proposal.id)).filter((e) => e.step === 'denied');
      expect(denials.map((e) => e.reason)).toEqual(['grant_exhausted']);
      expect(world.provider.calls).toBe(4);
      expect((await engine.getGrant('acme', grant.id))?.usage.uses).toBe(3);
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
      expect((await engine.getGrant('acme', grant.id))?.usage.uses).toBe(5);
    });

    it('a finished proposal set back to pending by hand is replayed, never executed again', async () => {
      const p = (await propose('inv-104')).proposal;
      const first = await engine.approveAndExecute({
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
      const again = await engine.approveAndExecute({
        tenant: 'acme',
        proposalId: p.id,
        approver: bob,
        seenDigest: p.digest,
      });
      expect(again).toMatchObject({ kind: 'not_approvable', reason: 'replayed' });
      // With the attempt counter reset too, the recorded attempt 1 still blocks the claim, by name.
      await sql.run('UPDATE countersign_proposals SET current_attempt = 0 WHERE id = ?', [p.id]);
      expect(
        await engine.approveAndExecute({
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
      expect((await engine.get('acme', p.id))?.status).toBe('pending');
      expect(world.provider.calls).toBe(1);
      const attempts = await sql.all('SELECT number FROM countersign_attempts WHERE proposal_id = ?', [p.id]);
      expect(attempts.map((a) => Number(a['number']))).toEqual([1]);
    });
  });
}
