import assert from 'node:assert/strict';
import { auditChainer } from '../audit/chain.js';
import type { AuditEvent, AuditEventDraft, PendingAuditEvent } from '../audit/event.js';
import { AuditLedger } from '../ledger/audit-ledger.js';
import { sql } from '../sql/sql.js';
import { UnstorableValueError } from '../store/unstorable-value.js';
import {
  PROPOSAL_FORMAT_VERSION,
  type AttemptRecord,
  type GrantRecord,
  type ProposalRecord,
} from '../store/records.js';
import type { ProposalFilter, ProposalQuery, Store } from '../store/store.js';

const NO_SEAL = auditChainer(undefined);

/** One behaviour every store must have; run each with your test framework's `it`/`test`. */
export interface ConformanceCase {
  readonly name: string;
  run(): Promise<void>;
}

let sequence = 0;

/** A valid proposal record for store tests (not a real contract: stores never judge digests). */
export function sampleProposal(overrides: Partial<ProposalRecord> = {}): ProposalRecord {
  sequence++;
  return {
    formatVersion: PROPOSAL_FORMAT_VERSION,
    tenant: 'acme',
    id: `prp_conformance${String(sequence).padStart(12, '0')}`,
    runId: 'run-1',
    section: 'payables',
    resource: 'invoice:inv-104',
    requestedBy: 'agent:acme',
    editedBy: null,
    policyJson: '{"required":1,"roles":[]}',
    operation: 'invoice.pay',
    scopeVersion: 1,
    viewVersion: 1,
    requestJson: '{"invoice_id":"inv-104"}',
    argumentsJson: '{"amount_minor":24049}',
    scopeJson: '{"amount_minor":24049,"tenant":"acme"}',
    scopeDigest: 'b'.repeat(64),
    previewJson: '{"title":"Pay ✓ 240.49 USD"}',
    digest: 'a'.repeat(64),
    seal: null,
    status: 'pending',
    createdAt: 1_000_000 + sequence,
    expiresAt: 2_000_000,
    supersedes: null,
    supersededBy: null,
    decidedBy: null,
    decidedAt: null,
    approvalKind: null,
    grantId: null,
    decisionNote: null,
    currentAttempt: 0,
    outcomeJson: null,
    updatedAt: 1_000_000,
    ...overrides,
  };
}

function sampleAttempt(
  proposal: ProposalRecord,
  number: number,
  overrides: Partial<AttemptRecord> = {},
): AttemptRecord {
  return {
    tenant: proposal.tenant,
    id: `att_${proposal.id.slice(4)}_${number}`,
    proposalId: proposal.id,
    number,
    idempotencyKey: `${proposal.id}.${number}`,
    status: 'executing',
    leaseUntil: 5_000,
    commandId: null,
    startedAt: 1_000,
    finishedAt: null,
    ...overrides,
  };
}

function sampleGrant(overrides: Partial<GrantRecord> = {}): GrantRecord {
  sequence++;
  return {
    tenant: 'acme',
    id: `grt_conformance${String(sequence).padStart(12, '0')}`,
    subject: 'agent:acme',
    operationsJson: '["invoice.pay"]',
    resource: 'invoice:*',
    constraintsJson: '{"amount_minor":{"max":10000}}',
    capField: 'amount_minor',
    capTotal: 30_000,
    capUses: null,
    usedCount: 0,
    usedTotal: 0,
    expiresAt: 5_000_000_000_000,
    createdAt: 1_000 + sequence,
    createdBy: 'user:root',
    revokedAt: null,
    revokedBy: null,
    note: null,
    satisfiesQuorum: false,
    seal: null,
    ...overrides,
  };
}

/** Appends one event in a transaction of its own and answers it as chained (see `TransactionOptions.onChained`). */
async function appendChained(store: Store, event: PendingAuditEvent): Promise<AuditEvent> {
  let chained: readonly AuditEvent[] = [];
  await new AuditLedger(store, NO_SEAL).transaction(async (_tx, audit) => audit.append(event), {
    onChained: (events) => {
      chained = events;
    },
  });
  assert.equal(chained.length, 1, 'onChained reports the event once it is chained');
  return chained[0]!;
}

function draft(tenant: string, proposalId: string, step: AuditEventDraft['step']): AuditEventDraft {
  return {
    tenant,
    proposalId,
    attemptId: null,
    runId: 'run-1',
    step,
    actor: 'agent:acme',
    reason: null,
    digests: { proposed: 'a'.repeat(64) },
    commandId: null,
    detail: { note: 'ünïcode ✓' },
    at: 1_000,
  };
}

/**
 * The store conformance suite: the behaviours the engine relies on, for any backend. `makeStore`
 * must return a fresh, empty store each call (it is migrated by the suite and closed after).
 *
 * @example
 * import { storeConformance } from 'countersign/testing';
 * for (const c of storeConformance(() => new SqliteStore({ path: ':memory:' }))) it(c.name, () => c.run());
 */
export function storeConformance(makeStore: () => Store | Promise<Store>): ConformanceCase[] {
  const withStore = (name: string, body: (store: Store) => Promise<void>): ConformanceCase => ({
    name,
    run: async () => {
      const store = await makeStore();
      try {
        await store.migrate();
        await body(store);
      } finally {
        await store.close();
      }
    },
  });
  return [
    withStore('migrate is idempotent', async (store) => {
      await store.migrate();
      await store.migrate();
    }),
    withStore('a proposal round-trips every field exactly', async (store) => {
      const record = sampleProposal({
        section: null,
        seal: 'c'.repeat(64),
        decisionNote: 'line\nbreak "quoted" ✓',
      });
      await store.transaction((tx) => tx.insertProposal(record));
      const back = await store.transaction((tx) => tx.getProposal(record.tenant, record.id));
      assert.deepEqual(back, record);
    }),
    withStore(
      'text no backend keeps exactly (a NUL, a lone surrogate) is refused and nothing is stored',
      async (store) => {
        for (const decisionNote of ['nul\u0000byte', 'lone \ud800 surrogate']) {
          const record = sampleProposal({ decisionNote });
          const error = await store.transaction((tx) => tx.insertProposal(record)).catch((e: unknown) => e);
          assert.ok(
            error instanceof UnstorableValueError,
            `${JSON.stringify(decisionNote)}: ${String(error)}`,
          );
          assert.equal(error.column, 'decision_note');
          assert.equal(await store.transaction((tx) => tx.getProposal(record.tenant, record.id)), undefined);
        }
        const kept = sampleProposal();
        await store.transaction((tx) => tx.insertProposal(kept));
        const error = await store
          .transaction((tx) =>
            tx.updateProposal(
              'acme',
              kept.id,
              { status: 'pending' },
              { status: 'declined', decisionNote: 'x\u0000' },
            ),
          )
          .catch((e: unknown) => e);
        assert.ok(error instanceof UnstorableValueError);
        assert.equal((await store.transaction((tx) => tx.getProposal('acme', kept.id)))?.status, 'pending');
        // A lookup by such a key finds nothing (none can be stored) instead of failing.
        assert.equal(await store.read((tx) => tx.getProposal('acme', `${kept.id}\u0000`)), undefined);
        assert.equal(await store.read((tx) => tx.getProposal('acme\ud800', kept.id)), undefined);
      },
    ),
    withStore('every read is tenant-scoped', async (store) => {
      const mine = sampleProposal({ tenant: 'acme' });
      const theirs = sampleProposal({ tenant: 'globex' });
      await store.transaction(async (tx) => {
        await tx.insertProposal(mine);
        await tx.insertProposal(theirs);
      });
      assert.equal(await store.transaction((tx) => tx.getProposal('globex', mine.id)), undefined);
      const listed = await store.transaction((tx) => tx.listProposals('acme', { limit: 10 }));
      assert.deepEqual(
        listed.map((r) => r.id),
        [mine.id],
      );
      const applied = await store.transaction((tx) =>
        tx.updateProposal('globex', mine.id, { status: 'pending' }, { status: 'declined' }),
      );
      assert.equal(applied, false);
    }),
    withStore('updateProposal is a compare-and-set on status and attempt', async (store) => {
      const record = sampleProposal();
      await store.transaction((tx) => tx.insertProposal(record));
      const first = await store.transaction((tx) =>
        tx.updateProposal(
          'acme',
          record.id,
          { status: 'pending' },
          { status: 'executing', currentAttempt: 1 },
        ),
      );
      const second = await store.transaction((tx) =>
        tx.updateProposal(
          'acme',
          record.id,
          { status: 'pending' },
          { status: 'executing', currentAttempt: 1 },
        ),
      );
      assert.equal(first, true);
      assert.equal(second, false);
      const fenced = await store.transaction((tx) =>
        tx.updateProposal('acme', record.id, { status: 'executing', attempt: 2 }, { status: 'succeeded' }),
      );
      assert.equal(fenced, false);
      const ok = await store.transaction((tx) =>
        tx.updateProposal(
          'acme',
          record.id,
          { status: 'executing', attempt: 1 },
          { status: 'succeeded', outcomeJson: '{"kind":"succeeded"}' },
        ),
      );
      assert.equal(ok, true);
      assert.equal((await store.transaction((tx) => tx.getProposal('acme', record.id)))?.status, 'succeeded');
    }),
    withStore('concurrent compare-and-sets: exactly one applies', async (store) => {
      const record = sampleProposal();
      await store.transaction((tx) => tx.insertProposal(record));
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.transaction(async (tx) => {
            const current = await tx.getProposal('acme', record.id);
            if (current?.status !== 'pending') return false;
            return tx.updateProposal(
              'acme',
              record.id,
              { status: 'pending' },
              { status: 'executing', currentAttempt: 1 },
            );
          }),
        ),
      );
      assert.equal(results.filter(Boolean).length, 1);
    }),
    withStore('a read never sees rows of a transaction that rolls back', async (store) => {
      const record = sampleProposal();
      let release: () => void = () => {};
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let inserted: () => void = () => {};
      const insertedPromise = new Promise<void>((resolve) => {
        inserted = resolve;
      });
      const writer = store
        .transaction(async (tx) => {
          await tx.insertProposal(record);
          inserted();
          await held;
          throw new Error('rolled back');
        })
        .catch(() => 'rolled back');
      await insertedPromise;
      const reading = store.read((r) => r.getProposal('acme', record.id));
      release();
      assert.equal(await reading, undefined);
      assert.equal(await writer, 'rolled back');
      await store.transaction((tx) => tx.insertProposal(record));
      assert.deepEqual(await store.read((r) => r.getProposal('acme', record.id)), record);
    }),
    withStore('a transaction that throws leaves nothing behind', async (store) => {
      const record = sampleProposal();
      await assert.rejects(
        new AuditLedger(store, NO_SEAL).transaction(async (tx, audit) => {
          await tx.insertProposal(record);
          audit.append({ ...draft('acme', record.id, 'proposed'), id: 'evt_rollback' });
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal(await store.transaction((tx) => tx.getProposal('acme', record.id)), undefined);
      assert.equal(await store.transaction((tx) => tx.auditHead('acme')), undefined);
    }),
    withStore('listProposals filters by status, run, operation and agent, newest first', async (store) => {
      const records = [
        sampleProposal({ createdAt: 10, runId: 'run-a' }),
        sampleProposal({ createdAt: 20, runId: 'run-b', status: 'declined', requestedBy: 'agent:other' }),
        sampleProposal({ createdAt: 30, runId: 'run-a' }),
        sampleProposal({ createdAt: 30, runId: 'run-a', operation: 'order.refund' }),
      ];
      await store.transaction(async (tx) => {
        for (const r of records) await tx.insertProposal(r);
      });
      const all = await store.transaction((tx) => tx.listProposals('acme', { limit: 10 }));
      assert.deepEqual(
        all.map((r) => r.createdAt),
        [30, 30, 20, 10],
      );
      const pending = await store.transaction((tx) =>
        tx.listProposals('acme', { limit: 10, status: 'pending' }),
      );
      assert.equal(pending.length, 3);
      const several = await store.transaction((tx) =>
        tx.listProposals('acme', { limit: 10, status: ['pending', 'declined'] }),
      );
      assert.equal(several.length, 4);
      const runB = await store.transaction((tx) => tx.listProposals('acme', { limit: 10, runId: 'run-b' }));
      assert.deepEqual(
        runB.map((r) => r.id),
        [records[1]!.id],
      );
      const refunds = await store.transaction((tx) =>
        tx.listProposals('acme', { limit: 10, operation: 'order.refund' }),
      );
      assert.deepEqual(
        refunds.map((r) => r.id),
        [records[3]!.id],
      );
      const others = await store.transaction((tx) =>
        tx.listProposals('acme', { limit: 10, requestedBy: 'agent:other' }),
      );
      assert.deepEqual(
        others.map((r) => r.id),
        [records[1]!.id],
      );
      const page1 = await store.transaction((tx) => tx.listProposals('acme', { limit: 2 }));
      const last = page1[1]!;
      const page2 = await store.transaction((tx) =>
        tx.listProposals('acme', { limit: 2, before: { createdAt: last.createdAt, id: last.id } }),
      );
      assert.deepEqual([...page1, ...page2].map((r) => r.id).sort(), records.map((r) => r.id).sort());
    }),
    withStore(
      'listProposals searches, sorts and pages by time left and amount; countMatchingProposals counts every match, per tenant',
      async (store) => {
        const pay = (minor: number | string, title: string) =>
          JSON.stringify({ title, amount: { minor, currency: 'USD' } });
        const records = [
          sampleProposal({
            previewJson: pay(500, 'Pay Northwind 5.00 USD'),
            expiresAt: 900,
            digest: 'c'.repeat(64),
          }),
          sampleProposal({ previewJson: pay(90_000, 'Pay 100% of Acme_Co'), expiresAt: 300 }),
          sampleProposal({ previewJson: pay(7_000, 'Pay 100 percent of AcmeXCo'), expiresAt: 600 }),
          sampleProposal({
            previewJson: '{"title":"Send the report"}',
            expiresAt: 100,
            status: 'declined',
            updatedAt: 5,
          }),
          sampleProposal({
            previewJson: pay('lots', 'Pay an odd amount'),
            expiresAt: 700,
            operation: 'order.refund',
          }),
        ];
        const foreign = sampleProposal({ tenant: 'globex', previewJson: pay(1, 'Pay Northwind 0.01 USD') });
        await store.transaction(async (tx) => {
          for (const r of [...records, foreign]) await tx.insertProposal(r);
        });
        const ids = (rows: readonly ProposalRecord[]) => rows.map((r) => r.id);
        const list = (query: Omit<ProposalQuery, 'limit'> & { limit?: number }) =>
          store.read((tx) => tx.listProposals('acme', { limit: 10, ...query }));
        const count = (filter: ProposalFilter) =>
          store.read((tx) => tx.countMatchingProposals('acme', filter));
        const [a, b, c, d, e] = records as [
          ProposalRecord,
          ProposalRecord,
          ProposalRecord,
          ProposalRecord,
          ProposalRecord,
        ];
        assert.deepEqual(ids(await list({ search: 'northwind' })), [a.id]);
        assert.deepEqual(ids(await list({ search: b.id })), [b.id]);
        assert.deepEqual(ids(await list({ search: 'cccccccccccc' })), [a.id]);
        // LIKE wildcards in the operator's text are literal.
        assert.deepEqual(ids(await list({ search: '100%' })), [b.id]);
        assert.deepEqual(ids(await list({ search: 'acme_co' })), [b.id]);
        assert.deepEqual(ids(await list({ search: '%' })), [b.id]);
        assert.deepEqual(ids(await list({ search: "'; DROP TABLE countersign_proposals; --" })), []);
        assert.deepEqual(ids(await list({ sort: 'expires' })), [d.id, b.id, c.id, e.id, a.id]);
        assert.deepEqual(ids(await list({ sort: 'amount' })), [
          b.id,
          c.id,
          a.id,
          ...[d.id, e.id].sort().reverse(),
        ]);
        assert.deepEqual(
          ids(await list({ updatedSince: 6, status: 'pending', operation: 'invoice.pay' })).sort(),
          [a.id, b.id, c.id].sort(),
        );
        for (const sort of ['expires', 'amount', 'created'] as const) {
          const whole = ids(await list({ sort }));
          const seen: string[] = [];
          let after: { key: number; id: string } | undefined;
          for (let i = 0; i < 5; i++) {
            const page = await list({ sort, limit: 2, ...(after ? { after } : {}) });
            seen.push(...ids(page));
            const last = page[page.length - 1];
            if (page.length < 2 || !last) break;
            const preview = JSON.parse(last.previewJson) as { amount?: { minor?: unknown } };
            const minor = preview.amount?.minor;
            const key =
              sort === 'expires'
                ? last.expiresAt
                : sort === 'created'
                  ? last.createdAt
                  : typeof minor === 'number'
                    ? minor
                    : -1;
            after = { key, id: last.id };
          }
          assert.deepEqual(seen, whole, `pages in ${sort} order`);
        }
        assert.equal(await count({}), 5);
        assert.equal(await count({ status: 'pending' }), 4);
        assert.equal(await count({ status: 'pending', search: 'northwind' }), 1);
        assert.equal(await count({ status: [] }), 0);
        assert.equal(
          await store.read((tx) => tx.countMatchingProposals('globex', { search: 'northwind' })),
          1,
        );
      },
    ),
    withStore(
      'listProposals narrows to one resource or scope digest, leaves one id out and reads forwards from a position, per tenant',
      async (store) => {
        const at = (createdAt: number, overrides: Partial<ProposalRecord> = {}) =>
          sampleProposal({ createdAt, resource: 'invoice:inv-7', ...overrides });
        const old = at(10, { status: 'revision_required', scopeDigest: 'd'.repeat(64) });
        const other = at(20, { resource: 'invoice:inv-8', scopeDigest: 'd'.repeat(64) });
        const refund = at(25, { operation: 'order.refund', status: 'revision_required' });
        const again = at(30, { scopeDigest: 'd'.repeat(64) });
        const later = at(40, { status: 'revision_required' });
        const foreign = at(35, { tenant: 'globex', scopeDigest: 'd'.repeat(64) });
        await store.transaction(async (tx) => {
          for (const r of [old, other, refund, again, later, foreign]) await tx.insertProposal(r);
        });
        const ids = (rows: readonly ProposalRecord[]) => rows.map((r) => r.id);
        const list = (query: Omit<ProposalQuery, 'limit'>) =>
          store.read((tx) => tx.listProposals('acme', { limit: 10, ...query }));
        const pay = { resource: 'invoice:inv-7', operation: 'invoice.pay' };
        // The latest earlier one needing revision, for the same resource and operation.
        assert.deepEqual(
          ids(
            await list({
              ...pay,
              status: 'revision_required',
              before: { createdAt: again.createdAt, id: again.id },
            }),
          ),
          [old.id],
        );
        // Forwards from a position: oldest first.
        assert.deepEqual(ids(await list({ ...pay, since: { createdAt: old.createdAt, id: old.id } })), [
          again.id,
          later.id,
        ]);
        assert.deepEqual(
          ids(await list({ ...pay, since: { createdAt: later.createdAt, id: later.id } })),
          [],
        );
        assert.deepEqual(
          ids(await list({ scopeDigest: 'd'.repeat(64), status: 'pending', exceptId: again.id })),
          [other.id],
        );
        assert.equal(
          await store.read((tx) => tx.countMatchingProposals('acme', { scopeDigest: 'd'.repeat(64) })),
          3,
        );
        assert.deepEqual(
          ids(
            await store.read((tx) => tx.listProposals('globex', { limit: 10, scopeDigest: 'd'.repeat(64) })),
          ),
          [foreign.id],
        );
      },
    ),
    withStore(
      'recent changes: decided and executing proposals changed since a time, in their tenant only',
      async (store) => {
        const at = (status: ProposalRecord['status'], updatedAt: number, tenant = 'acme') =>
          sampleProposal({ status, updatedAt, tenant });
        const rows = {
          doneLately: at('succeeded', 500),
          doneBefore: at('succeeded', 99),
          runningLately: at('executing', 100),
          runningBefore: at('executing', 50),
          waiting: at('pending', 900),
          otherTenant: at('succeeded', 700, 'globex'),
        };
        await store.transaction(async (tx) => {
          for (const r of Object.values(rows)) await tx.insertProposal(r);
        });
        const recent: ProposalRecord['status'][] = ['succeeded', 'declined', 'executing'];
        const listed = await store.read((tx) =>
          tx.listProposals('acme', { status: recent, updatedSince: 100, limit: 10 }),
        );
        assert.deepEqual(listed.map((p) => p.id).sort(), [rows.doneLately.id, rows.runningLately.id].sort());
        assert.equal(
          await store.read((tx) => tx.countMatchingProposals('acme', { status: recent, updatedSince: 100 })),
          2,
        );
        const decidedOnly = await store.read((tx) =>
          tx.listProposals('acme', { status: ['succeeded'], updatedSince: 100, limit: 10 }),
        );
        assert.deepEqual(
          decidedOnly.map((p) => p.id),
          [rows.doneLately.id],
        );
        const runningOnly = await store.read((tx) =>
          tx.listProposals('acme', { status: ['executing'], updatedSince: 100, limit: 10 }),
        );
        assert.deepEqual(
          runningOnly.map((p) => p.id),
          [rows.runningLately.id],
        );
      },
    ),
    withStore('listExpired returns pending proposals at or past expiry across tenants', async (store) => {
      const due = sampleProposal({ expiresAt: 100 });
      const later = sampleProposal({ expiresAt: 200 });
      const decided = sampleProposal({ expiresAt: 50, status: 'declined' });
      const other = sampleProposal({ tenant: 'globex', expiresAt: 100 });
      await store.transaction(async (tx) => {
        for (const r of [due, later, decided, other]) await tx.insertProposal(r);
      });
      const expired = await store.transaction((tx) => tx.listExpired(100, 10));
      assert.deepEqual(expired.map((e) => e.id).sort(), [due.id, other.id].sort());
    }),
    withStore(
      'a lookup by a key no store can hold (a NUL character) finds nothing, never fails',
      async (store) => {
        const key = 'prp_\u0000';
        assert.equal(await store.read((tx) => tx.getProposal('acme', key)), undefined);
        assert.equal(await store.read((tx) => tx.getGrant('acme', 'grt_\u0000')), undefined);
        assert.deepEqual(await store.read((tx) => tx.listAudit('acme', { proposalId: key, limit: 10 })), []);
        assert.deepEqual(await store.read((tx) => tx.listApprovals('acme', key)), []);
      },
    ),
    withStore(
      'countProposals counts pending and recent proposals per tenant and requester',
      async (store) => {
        const empty = await store.read((tx) => tx.countProposals('acme', { createdSince: 0 }));
        assert.deepEqual(empty, { pending: 0, created: 0, oldestCreatedAt: null });
        const records = [
          sampleProposal({ requestedBy: 'agent:a', createdAt: 100 }),
          sampleProposal({ requestedBy: 'agent:a', createdAt: 200 }),
          sampleProposal({ requestedBy: 'agent:a', createdAt: 300, status: 'declined' }),
          sampleProposal({ requestedBy: 'agent:b', createdAt: 250 }),
          sampleProposal({ tenant: 'globex', requestedBy: 'agent:a', createdAt: 300 }),
        ];
        await store.transaction(async (tx) => {
          for (const r of records) await tx.insertProposal(r);
        });
        assert.deepEqual(
          await store.read((tx) => tx.countProposals('acme', { requestedBy: 'agent:a', createdSince: 150 })),
          { pending: 2, created: 2, oldestCreatedAt: 200 },
          'pending counts every age; created counts every status since the time, inclusive',
        );
        assert.deepEqual(await store.read((tx) => tx.countProposals('acme', { createdSince: 200 })), {
          pending: 3,
          created: 3,
          oldestCreatedAt: 200,
        });
        assert.deepEqual(
          await store.read((tx) => tx.countProposals('acme', { requestedBy: 'agent:c', createdSince: 0 })),
          { pending: 0, created: 0, oldestCreatedAt: null },
        );
        assert.deepEqual(
          await store.read((tx) => tx.countProposals('acme', { createdSince: 0, atMost: 2 })),
          { pending: 2, created: 2, oldestCreatedAt: 100 },
          'each count stops at atMost; the oldest is still the oldest',
        );
        await store.transaction((tx) =>
          tx.updateProposal('acme', records[0]!.id, { status: 'pending' }, { status: 'declined' }),
        );
        assert.equal(
          (
            await store.transaction((tx) =>
              tx.countProposals('acme', { requestedBy: 'agent:a', createdSince: 0 }),
            )
          ).pending,
          1,
          'a decided proposal is no longer pending',
        );
      },
    ),
    withStore(
      'countProposals counts exactly across whole seconds, whatever part of its first second a window takes',
      async (store) => {
        const at = [999, 1000, 1500, 2000, 2999, 61_000, 61_001];
        await store.transaction(async (tx) => {
          for (const createdAt of at)
            await tx.insertProposal(sampleProposal({ tenant: 'initech', requestedBy: 'agent:r', createdAt }));
          await tx.insertProposal(
            sampleProposal({ tenant: 'initech', requestedBy: 'agent:s', createdAt: 1500 }),
          );
        });
        const count = (createdSince: number, requestedBy?: string) =>
          store.read((tx) =>
            tx.countProposals(
              'initech',
              requestedBy === undefined ? { createdSince } : { createdSince, requestedBy },
            ),
          );
        for (const since of [0, 999, 1000, 1001, 1500, 1501, 2000, 2999, 3000, 61_001, 61_002]) {
          const mine = at.filter((t) => t >= since);
          const all = mine.length + (since <= 1500 ? 1 : 0);
          assert.deepEqual(
            await count(since, 'agent:r'),
            { pending: at.length, created: mine.length, oldestCreatedAt: mine[0] ?? null },
            `agent:r since ${since}`,
          );
          assert.equal((await count(since)).created, all, `the tenant since ${since}`);
          // An upper bound: at least the exact count, at most the count from the start of the
          // window's first second (a store may ignore the flag and count exactly).
          const bound = await store.read((tx) =>
            tx.countProposals('initech', { createdSince: since, requestedBy: 'agent:r', upperBound: true }),
          );
          const fromSecond = at.filter((t) => t >= Math.floor(since / 1000) * 1000).length;
          assert.equal(bound.pending, at.length, `upper bound: pending since ${since}`);
          assert.ok(
            bound.created >= mine.length && bound.created <= fromSecond,
            `upper bound since ${since}: ${bound.created} is not within [${mine.length}, ${fromSecond}]`,
          );
        }
        assert.deepEqual(
          await store.read((tx) => tx.countProposals('initech', { createdSince: 1001, atMost: 3 })),
          { pending: 3, created: 3, oldestCreatedAt: 1500 },
          'the created count stops at atMost too',
        );
      },
    ),
    withStore(
      'attempts: insert, list, compare-and-set, unique idempotency key, expired leases',
      async (store) => {
        const record = sampleProposal();
        await store.transaction((tx) => tx.insertProposal(record));
        const attempt = sampleAttempt(record, 1, { leaseUntil: 100 });
        await store.transaction((tx) => tx.insertAttempt(attempt));
        await assert.rejects(
          store.transaction((tx) =>
            tx.insertAttempt({ ...sampleAttempt(record, 2), idempotencyKey: attempt.idempotencyKey }),
          ),
        );
        assert.deepEqual(await store.transaction((tx) => tx.getAttempt('acme', attempt.id)), attempt);
        assert.equal(await store.transaction((tx) => tx.getAttempt('globex', attempt.id)), undefined);
        assert.deepEqual(
          (await store.transaction((tx) => tx.listExpiredLeases(101, 10))).map((a) => a.id),
          [attempt.id],
        );
        assert.deepEqual(await store.transaction((tx) => tx.listExpiredLeases(100, 10)), []);
        assert.equal(
          await store.transaction((tx) =>
            tx.updateAttempt('acme', attempt.id, 'executing', { finishedAt: 1 }, { leaseBefore: 100 }),
          ),
          false,
          'a sweep never fences an attempt whose lease has not ended',
        );
        assert.equal(
          await store.transaction((tx) =>
            tx.updateAttempt('acme', attempt.id, 'executing', { commandId: 'cmd_1' }),
          ),
          true,
        );
        assert.equal(
          await store.transaction((tx) =>
            tx.updateAttempt('acme', attempt.id, 'completed', { finishedAt: 9 }),
          ),
          false,
        );
        assert.equal(
          await store.transaction((tx) =>
            tx.updateAttempt('acme', attempt.id, 'executing', { status: 'completed', finishedAt: 9 }),
          ),
          true,
        );
        const listed = await store.transaction((tx) => tx.listAttempts('acme', record.id));
        assert.deepEqual(
          listed.map((a) => [a.status, a.commandId, a.finishedAt]),
          [['completed', 'cmd_1', 9]],
        );
        const waiting = sampleAttempt(record, 2, { status: 'needs_reconciliation', leaseUntil: 500 });
        await store.transaction((tx) => tx.insertAttempt(waiting));
        assert.deepEqual(await store.read((tx) => tx.listReconciliationDue(500, 10)), []);
        assert.deepEqual(
          (await store.read((tx) => tx.listReconciliationDue(501, 10))).map((a) => a.id),
          [waiting.id],
          'a needs_reconciliation attempt is due once its next try (leaseUntil) has passed',
        );
        assert.deepEqual(await store.read((tx) => tx.listExpiredLeases(1_000, 10)), []);
      },
    ),
    withStore('audit chains are per tenant, ordered, and round-trip exactly', async (store) => {
      const appended = [];
      for (const [tenant, step] of [
        ['acme', 'proposed'],
        ['globex', 'proposed'],
        ['acme', 'approved'],
      ] as const) {
        appended.push(
          await appendChained(store, {
            ...draft(tenant, 'prp_x', step),
            id: `evt_${appended.length}`,
          }),
        );
      }
      assert.deepEqual(
        appended.map((e) => [e.tenant, e.seq]),
        [
          ['acme', 1],
          ['globex', 1],
          ['acme', 2],
        ],
      );
      const acme = await store.transaction((tx) => tx.listAudit('acme', { limit: 10 }));
      assert.deepEqual(acme, [appended[0], appended[2]]);
      assert.deepEqual(await store.transaction((tx) => tx.listAudit('acme', { limit: 10, afterSeq: 1 })), [
        appended[2],
      ]);
      assert.deepEqual(
        await store.transaction((tx) => tx.listAudit('acme', { limit: 10, proposalId: 'prp_other' })),
        [],
      );
      assert.deepEqual(await store.transaction((tx) => tx.auditHead('acme')), {
        seq: 2,
        chainHash: appended[2]!.chainHash,
      });
      assert.deepEqual(await store.transaction((tx) => tx.auditTenants()), ['acme', 'globex']);
    }),
    withStore(
      'audit pages by sequence are disjoint, ordered and complete, and filter by step',
      async (store) => {
        // Two proposals interleaved, refusals between the decisions: the shape a refusal flood leaves.
        const steps = ['proposed', 'denied', 'denied', 'approved', 'denied', 'claimed', 'outcome'] as const;
        await new AuditLedger(store, NO_SEAL).transaction(async (_tx, audit) => {
          for (const [i, step] of steps.entries())
            for (const proposalId of ['prp_a', 'prp_b'])
              audit.append({ ...draft('acme', proposalId, step), id: `evt_p${i}${proposalId}` });
        });
        const all = await store.transaction((tx) =>
          tx.listAudit('acme', { proposalId: 'prp_a', limit: 100 }),
        );
        assert.deepEqual(
          all.map((e) => e.step),
          [...steps],
        );
        for (const limit of [1, 2, 3, 7]) {
          const seen: number[] = [];
          let afterSeq = 0;
          for (;;) {
            const page = await store.transaction((tx) =>
              tx.listAudit('acme', { proposalId: 'prp_a', afterSeq, limit }),
            );
            assert.ok(page.length <= limit, `a page holds at most ${limit} events`);
            seen.push(...page.map((e) => e.seq));
            if (page.length < limit) break;
            afterSeq = page[page.length - 1]!.seq;
          }
          assert.deepEqual(
            seen,
            all.map((e) => e.seq),
            `pages of ${limit} are the whole, in order, once`,
          );
        }
        const decisions = await store.transaction((tx) =>
          tx.listAudit('acme', { proposalId: 'prp_a', exceptSteps: ['denied'], limit: 100 }),
        );
        assert.deepEqual(
          decisions.map((e) => e.step),
          ['proposed', 'approved', 'claimed', 'outcome'],
        );
        const refusals = await store.transaction((tx) =>
          tx.listAudit('acme', { proposalId: 'prp_a', steps: ['denied'], afterSeq: all[1]!.seq, limit: 100 }),
        );
        assert.deepEqual(
          refusals.map((e) => e.seq),
          [all[2]!.seq, all[4]!.seq],
        );
        assert.deepEqual(
          await store.transaction((tx) =>
            tx.listAudit('acme', { proposalId: 'prp_a', steps: [], limit: 100 }),
          ),
          [],
        );
      },
    ),
    withStore(
      'concurrent audit appends never fork a chain, and each is reported as chained',
      async (store) => {
        const reported: AuditEvent[] = [];
        await Promise.all(
          Array.from({ length: 25 }, (_, i) =>
            new AuditLedger(store, NO_SEAL).transaction(
              async (_tx, audit) => audit.append({ ...draft('acme', 'prp_x', 'proposed'), id: `evt_c${i}` }),
              { onChained: (chained) => reported.push(...chained) },
            ),
          ),
        );
        const events = await store.transaction((tx) => tx.listAudit('acme', { limit: 100 }));
        assert.deepEqual(
          events.map((e) => e.seq),
          Array.from({ length: 25 }, (_, i) => i + 1),
        );
        // Reported before each transaction() resolved, exactly as the chain holds them.
        assert.deepEqual(
          [...reported].sort((a, b) => a.seq - b.seq),
          events,
        );
      },
    ),
    withStore('quorum approvals: one per approver, listed oldest first, tenant-scoped', async (store) => {
      const p = sampleProposal({ policyJson: '{"required":2,"roles":[]}' });
      const approval = (approver: string, at: number, tenant = p.tenant) => ({
        tenant,
        proposalId: p.id,
        approver,
        digest: p.digest,
        at,
        seal: approver === 'user:bob' ? 'b'.repeat(64) : null,
      });
      await store.transaction((tx) => tx.insertProposal(p));
      assert.deepEqual(await store.transaction((tx) => tx.getProposal(p.tenant, p.id)), p);
      assert.equal(await store.transaction((tx) => tx.insertApproval(approval('user:bob', 20))), true);
      assert.equal(await store.transaction((tx) => tx.insertApproval(approval('user:ada', 10))), true);
      // The same approver again inserts nothing, whatever the time.
      assert.equal(await store.transaction((tx) => tx.insertApproval(approval('user:ada', 30))), false);
      assert.equal(
        await store.transaction((tx) => tx.insertApproval(approval('user:ada', 40, 'globex'))),
        true,
      );
      assert.deepEqual(await store.read((r) => r.listApprovals(p.tenant, p.id)), [
        approval('user:ada', 10),
        approval('user:bob', 20),
      ]);
      assert.deepEqual(await store.read((r) => r.listApprovals('globex', p.id)), [
        approval('user:ada', 40, 'globex'),
      ]);
      // Only approvals of pending proposals, of the tenant asked about.
      assert.deepEqual(await store.transaction((tx) => tx.listPendingApprovals(p.tenant)), [
        approval('user:ada', 10),
        approval('user:bob', 20),
      ]);
      assert.equal(await store.transaction((tx) => tx.deleteApproval('globex', p.id, 'user:bob')), false);
      assert.equal(await store.transaction((tx) => tx.deleteApproval(p.tenant, p.id, 'user:ada')), true);
      assert.equal(await store.transaction((tx) => tx.deleteApproval(p.tenant, p.id, 'user:ada')), false);
      assert.deepEqual(await store.read((r) => r.listApprovals(p.tenant, p.id)), [approval('user:bob', 20)]);
      assert.deepEqual(await store.read((r) => r.listApprovals('globex', p.id)), [
        approval('user:ada', 40, 'globex'),
      ]);
      await store.transaction((tx) =>
        tx.updateProposal(
          p.tenant,
          p.id,
          { status: 'pending' },
          { status: 'declined', updatedAt: p.updatedAt + 1 },
        ),
      );
      assert.deepEqual(await store.transaction((tx) => tx.listPendingApprovals(p.tenant)), []);
    }),
    withStore('grants round-trip, are tenant-scoped, and list newest first by subject', async (store) => {
      const a = sampleGrant({ createdAt: 10 });
      const b = sampleGrant({
        createdAt: 20,
        satisfiesQuorum: true,
        subject: 'agent:other',
        capUses: 3,
        capField: null,
        capTotal: null,
        note: 'ünïcode ✓',
      });
      const foreign = sampleGrant({ tenant: 'globex' });
      await store.transaction(async (tx) => {
        for (const g of [a, b, foreign]) await tx.insertGrant(g);
      });
      assert.deepEqual(await store.transaction((tx) => tx.getGrant('acme', b.id)), b);
      assert.equal(await store.transaction((tx) => tx.getGrant('globex', a.id)), undefined);
      assert.deepEqual(
        (await store.transaction((tx) => tx.listGrants('acme', { limit: 10 }))).map((g) => g.id),
        [b.id, a.id],
      );
      assert.deepEqual(
        (await store.transaction((tx) => tx.listGrants('acme', { limit: 10, subject: 'agent:acme' }))).map(
          (g) => g.id,
        ),
        [a.id],
      );
    }),
    withStore('listGrants pages by (createdAt, id) from `before` on, per subject or not', async (store) => {
      const mine = [
        sampleGrant({ createdAt: 10 }),
        sampleGrant({ createdAt: 20 }),
        sampleGrant({ createdAt: 20 }),
        sampleGrant({ createdAt: 30 }),
      ];
      const other = sampleGrant({ createdAt: 25, subject: 'agent:other' });
      await store.transaction(async (tx) => {
        for (const g of [...mine, other]) await tx.insertGrant(g);
      });
      const newestFirst = [...mine].sort((x, y) => y.createdAt - x.createdAt || (x.id < y.id ? 1 : -1));
      const pages = async (subject?: string) => {
        const seen: string[] = [];
        let before: { createdAt: number; id: string } | undefined;
        for (;;) {
          const page = await store.read((r) =>
            r.listGrants('acme', {
              limit: 2,
              ...(subject ? { subject } : {}),
              ...(before ? { before } : {}),
            }),
          );
          seen.push(...page.map((g) => g.id));
          const last = page.at(-1);
          if (page.length < 2 || !last) return seen;
          before = { createdAt: last.createdAt, id: last.id };
        }
      };
      assert.deepEqual(
        await pages('agent:acme'),
        newestFirst.map((g) => g.id),
      );
      assert.deepEqual(await pages(), [
        newestFirst[0]!.id,
        other.id,
        ...newestFirst.slice(1).map((g) => g.id),
      ]);
    }),
    withStore(
      'grantHistory counts the approvals and the revocation the audit records of a grant',
      async (store) => {
        const g = sampleGrant({ usedCount: 1 });
        const actor = `grant:${g.id}`;
        await store.transaction((tx) => tx.insertGrant(g));
        const events: [string, AuditEventDraft][] = [
          ['acme', { ...draft('acme', 'prp_a', 'approved'), actor, reason: 'approved_by_grant' }],
          ['acme', { ...draft('acme', 'prp_b', 'approved'), actor, reason: 'approved_by_grant' }],
          // Not approvals by this grant: a refusal it named, another grant's, another tenant's.
          ['acme', { ...draft('acme', 'prp_c', 'denied'), actor, reason: 'grant_exhausted' }],
          [
            'acme',
            { ...draft('acme', 'prp_d', 'approved'), actor: 'grant:grt_x', reason: 'approved_by_grant' },
          ],
          ['globex', { ...draft('globex', 'prp_e', 'approved'), actor, reason: 'approved_by_grant' }],
        ];
        let n = 0;
        const append = (tenant: string, event: AuditEventDraft) =>
          new AuditLedger(store, NO_SEAL).transaction(async (_tx, audit) =>
            audit.append({ ...event, tenant, id: `evt_h${n++}` }),
          );
        for (const [tenant, event] of events) await append(tenant, event);
        assert.deepEqual(await store.transaction((tx) => tx.grantHistory('acme', g.id)), {
          grant: g,
          approvals: 2,
          revoked: false,
        });
        // A token's revocation (no reason) is not this grant's.
        await append('acme', { ...draft('acme', g.id, 'revoked'), actor: 'user:root' });
        assert.equal((await store.transaction((tx) => tx.grantHistory('acme', g.id)))?.revoked, false);
        await append('acme', {
          ...draft('acme', g.id, 'revoked'),
          actor: 'user:root',
          reason: 'grant_revoked',
        });
        assert.equal((await store.transaction((tx) => tx.grantHistory('acme', g.id)))?.revoked, true);
        assert.equal(await store.transaction((tx) => tx.grantHistory('globex', g.id)), undefined);
        assert.equal(await store.transaction((tx) => tx.grantHistory('acme', 'grt_missing')), undefined);
      },
    ),
    withStore(
      'spendGrant is one compare-and-set that holds both caps, expiry and revocation',
      async (store) => {
        const g = sampleGrant({ capTotal: 30_000, capUses: 3, expiresAt: 1_000 });
        await store.transaction((tx) => tx.insertGrant(g));
        const spend = (amount: number, now = 500) =>
          store.transaction((tx) => tx.spendGrant('acme', g.id, { amount, now }));
        assert.equal(await spend(10_000), true);
        assert.equal(await spend(20_001), false);
        assert.equal(await spend(20_000), true);
        assert.equal(await spend(0), true);
        assert.equal(await spend(0), false, 'the count of uses is spent');
        const h = sampleGrant({ capTotal: null, capUses: null, expiresAt: 1_000 });
        await store.transaction((tx) => tx.insertGrant(h));
        assert.equal(
          await store.transaction((tx) => tx.spendGrant('acme', h.id, { amount: 1, now: 1_000 })),
          false,
          'at the expiry instant',
        );
        assert.equal(
          await store.transaction((tx) => tx.spendGrant('globex', h.id, { amount: 1, now: 1 })),
          false,
          'another tenant',
        );
        assert.equal(
          await store.transaction((tx) => tx.revokeGrant('acme', h.id, { by: 'user:root', now: 2 })),
          true,
        );
        assert.equal(
          await store.transaction((tx) => tx.revokeGrant('acme', h.id, { by: 'user:root', now: 3 })),
          false,
        );
        assert.equal(
          await store.transaction((tx) => tx.spendGrant('acme', h.id, { amount: 1, now: 4 })),
          false,
          'revoked',
        );
        const back = await store.transaction((tx) => tx.getGrant('acme', g.id));
        assert.deepEqual([back?.usedCount, back?.usedTotal], [3, 30_000]);
      },
    ),
    withStore('concurrent spends never exceed a cap', async (store) => {
      const g = sampleGrant({ capTotal: 50_000, capUses: null });
      await store.transaction((tx) => tx.insertGrant(g));
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          store.transaction((tx) => tx.spendGrant('acme', g.id, { amount: 10_000, now: 1 })),
        ),
      );
      assert.equal(results.filter(Boolean).length, 5);
    }),
    withStore("groups and routes are a tenant's own, routes in position order", async (store) => {
      const group = {
        tenant: 'acme',
        name: 'finance',
        members: ['user:a@acme.test'],
        createdAt: 1,
        updatedAt: 1,
      };
      await store.transaction(async (tx) => {
        await tx.putGroup(group);
        await tx.putGroup({ ...group, members: ['user:a@acme.test', 'user:b@acme.test'], updatedAt: 2 });
        await tx.putGroup({ ...group, tenant: 'globex', members: ['user:g@globex.test'] });
      });
      assert.deepEqual(await store.read((tx) => tx.listGroups('acme')), [
        { ...group, members: ['user:a@acme.test', 'user:b@acme.test'], updatedAt: 2 },
      ]);
      const route = {
        tenant: 'acme',
        id: 'rte_b',
        name: 'big payments',
        position: 1,
        operation: 'invoice.pay',
        resource: 'invoice:*',
        amountField: 'amount_minor',
        above: 100_000,
        group: 'finance',
        channel: '#finance',
        escalateAfterMs: 60_000,
        escalationGroup: 'finance',
        escalationChannel: null,
        createdAt: 1,
        updatedAt: 1,
      };
      await store.transaction(async (tx) => {
        await tx.putRoute(route);
        await tx.putRoute({
          ...route,
          id: 'rte_a',
          position: 0,
          resource: null,
          amountField: null,
          above: null,
        });
        await tx.putRoute({ ...route, tenant: 'globex' });
      });
      const routes = await store.read((tx) => tx.listRoutes('acme'));
      assert.deepEqual(
        routes.map((r) => r.id),
        ['rte_a', 'rte_b'],
      );
      assert.deepEqual(routes[1], route);
      assert.equal(await store.transaction((tx) => tx.deleteRoute('globex', 'rte_a')), false);
      assert.equal(await store.transaction((tx) => tx.deleteRoute('acme', 'rte_a')), true);
      assert.equal(await store.transaction((tx) => tx.deleteGroup('acme', 'finance')), true);
      assert.deepEqual(await store.read((tx) => tx.listGroups('acme')), []);
      assert.equal((await store.read((tx) => tx.listGroups('globex'))).length, 1);
    }),
    withStore('a proposal route escalates once when due; a reminder is recorded once', async (store) => {
      const p = sampleProposal({ expiresAt: 10_000_000 });
      const routed = {
        tenant: 'acme',
        proposalId: p.id,
        routeId: 'rte_a',
        routeName: 'big payments',
        group: 'finance',
        channel: '#finance',
        escalateAt: 5_000_000,
        escalationGroup: 'leads',
        escalationChannel: '#leads',
        escalatedAt: null,
      };
      await store.transaction(async (tx) => {
        await tx.insertProposal(p);
        await tx.insertProposalRoute(routed);
      });
      assert.deepEqual(await store.read((tx) => tx.listProposalRoutes('acme', [p.id, 'prp_none'])), [routed]);
      assert.deepEqual(await store.read((tx) => tx.listProposalRoutes('globex', [p.id])), []);
      assert.deepEqual(await store.read((tx) => tx.listEscalationDue(4_999_999, 10)), []);
      assert.deepEqual(await store.read((tx) => tx.listEscalationDue(5_000_000, 10)), [
        { tenant: 'acme', id: p.id },
      ]);
      assert.equal(await store.transaction((tx) => tx.markEscalated('acme', p.id, 5_000_000)), true);
      assert.equal(await store.transaction((tx) => tx.markEscalated('acme', p.id, 5_000_001)), false);
      assert.deepEqual(await store.read((tx) => tx.listEscalationDue(6_000_000, 10)), []);
      assert.deepEqual(await store.read((tx) => tx.listReminderDue(1_000, 9_999_999, 10)), []);
      assert.deepEqual(await store.read((tx) => tx.listReminderDue(1_000, 10_000_000, 10)), [
        { tenant: 'acme', id: p.id },
      ]);
      assert.equal(await store.transaction((tx) => tx.insertReminder('acme', p.id, 9_000_000)), true);
      assert.equal(await store.transaction((tx) => tx.insertReminder('acme', p.id, 9_000_001)), false);
      assert.deepEqual(await store.read((tx) => tx.listReminderDue(1_000, 10_000_000, 10)), []);
    }),
    withStore('local effects run in the same transaction and roll back with it', async (store) => {
      await store.transaction(async (tx) => {
        await tx.local.run('CREATE TABLE IF NOT EXISTS conformance_effects (id TEXT PRIMARY KEY)');
        await tx.local.run(sql`INSERT INTO conformance_effects (id) VALUES (${'kept'})`);
      });
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.local.run(sql`INSERT INTO conformance_effects (id) VALUES (${'lost'})`);
          throw new Error('after the effect');
        }),
      );
      const rows = await store.transaction((tx) =>
        tx.local.all('SELECT id FROM conformance_effects ORDER BY id'),
      );
      assert.deepEqual(
        rows.map((r) => r['id']),
        ['kept'],
      );
    }),
  ];
}
