import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { createEngine, type Engine } from '../../src/index.js';
import { deliveryAdmin } from '../../src/notify/deliveries.js';
import { checkDeliverySeal } from '../../src/notify/delivery-seal.js';
import { notificationOutbox } from '../../src/notify/outbox-writer.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { type OutboxRecord, outboxOf } from '../../src/store/sql-outbox.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { approver, ManualClock, proposeDraft, proposePayment, tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';

const pg = testPostgres();
const temp = tempDir();
beforeAll(async () => {
  const store = await pg.store();
  await store.close();
}, 60_000);
afterAll(async () => {
  await pg.cleanup();
  temp.cleanup();
}, 60_000);

/** How each of {@link BACKENDS} opens a fresh store here. */
const openOn: Readonly<Record<BackendName, () => Promise<Store>>> = {
  sqlite: async () => new SqliteStore({ path: join(temp.dir, `outbox-${Math.random()}.db`) }),
  postgres: () => pg.store(),
};

/** A tenant's outbox in the order of the audit events that wrote it (webhook before email). */
async function rows(store: Store, tenant: string): Promise<OutboxRecord[]> {
  const { all, events } = await store.transaction(async (tx) => ({
    all: await outboxOf(tx, store.capabilities).list(tenant, { limit: 100 }),
    events: await tx.listAudit(tenant, { limit: 1000 }),
  }));
  const seq = new Map(events.map((e) => [e.id, e.seq]));
  const rank = (r: OutboxRecord) => (seq.get(r.eventId) ?? -1) * 2 + (r.channel === 'email' ? 1 : 0);
  return [...all].sort((a, b) => rank(a) - rank(b));
}

function summary(r: OutboxRecord) {
  const data = (JSON.parse(r.payloadJson) as { data: Record<string, unknown> }).data;
  return `${r.channel} ${r.type} ${String(data['status'])}`;
}

describe.each(BACKENDS)('lifecycle events in the outbox (%s)', (backend) => {
  const open = openOn[backend];
  async function engineOn(
    store: Store,
    fail?: string,
    world = demoWorld(),
  ): Promise<{ engine: Engine; clock: ManualClock }> {
    const operations = demoOperations(world);
    const clock = new ManualClock();
    const writer = notificationOutbox({ channels: ['webhook', 'email'], operations });
    const engine = await createEngine({
      store,
      operations,
      clock,
      stepWriters: [
        writer,
        // A writer that fails after the outbox row was inserted: the whole step must roll back.
        async (_tx, event) => {
          if (event.step === fail) throw new Error(`refused ${fail}`);
        },
      ],
    });
    return { engine, clock };
  }

  it('writes created, decided and outcome events with the step, one per channel (email for created and, to the approver, the outcome)', async () => {
    const store = await open();
    const { engine } = await engineOn(store);
    try {
      const proposal = await proposePayment(engine);
      expect((await rows(store, 'acme')).map(summary)).toEqual([
        'webhook proposal.created pending',
        'email proposal.created pending',
      ]);
      const done = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(done.kind).toBe('completed');
      const written = await rows(store, 'acme');
      expect(written.map(summary)).toEqual([
        'webhook proposal.created pending',
        'email proposal.created pending',
        'webhook proposal.decided approved',
        'webhook proposal.outcome succeeded',
        'email proposal.outcome succeeded',
      ]);
      // One event id per event, shared by its channels; every delivery id distinct.
      expect(written[0]!.eventId).toBe(written[1]!.eventId);
      expect(new Set(written.map((r) => r.id)).size).toBe(5);
      expect(new Set(written.map((r) => r.eventId)).size).toBe(3);
      // Every payload states the approval rule and where it stands; the outcome names who decided.
      const approvalsOf = (r: OutboxRecord) =>
        (JSON.parse(r.payloadJson) as { data: Record<string, unknown> }).data['approvals'];
      expect(approvalsOf(written[0]!)).toEqual({ required: 1, roles: [], given: 0, approvers: [] });
      expect(approvalsOf(written[4]!)).toEqual({
        required: 1,
        roles: [],
        given: 1,
        approvers: [approver().id],
      });
      const audit = await engine.audit.events('acme', proposal.id);
      for (const r of written) expect(audit.map((a) => a.id)).toContain(r.eventId);

      const payload = JSON.parse(written[0]!.payloadJson) as { data: Record<string, unknown> };
      expect(payload.data['short']).toBe(proposal.short);
      expect(payload.data['title']).toBe('Pay Northwind Paper Co. 240.49 USD');
      expect(payload.data['amount']).toEqual({ minor: 24049, currency: 'USD', display: '240.49 USD' });
      // The operation redacts the destination account: the outbox never holds it in full.
      expect(written[0]!.payloadJson).not.toContain('acct-supplier-7');
      expect((payload.data['preview'] as Record<string, unknown>)['destination_account_id']).toMatch(/7$/);
      expect(payload.data).not.toHaveProperty('approvalUrl');
      expect(payload.data).not.toHaveProperty('arguments');
    } finally {
      await engine.close();
    }
  });

  it('a first approval of two writes proposal.approval_given (webhook and email) saying 1 of 2 and who, sealed', async () => {
    const store = await open();
    const operations = demoOperations(demoWorld());
    const sealKey = 'k'.repeat(32);
    const engine = await createEngine({
      store,
      operations,
      clock: new ManualClock(),
      sealKey,
      stepWriters: [notificationOutbox({ channels: ['webhook', 'email'], operations, sealKey })],
    });
    try {
      // inv-105 is 12,500.00 USD: two approvers (src/demo/operations/invoice-pay.ts).
      const proposal = await proposePayment(engine, 'acme', 'inv-105');
      const ada = approver('acme', 'ada');
      const first = await engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: ada,
        seenDigest: proposal.digest,
      });
      expect(first.kind).toBe('awaiting_approvals');
      const written = await rows(store, 'acme');
      expect(written.map(summary)).toEqual([
        'webhook proposal.created pending',
        'email proposal.created pending',
        'webhook proposal.approval_given pending',
        'email proposal.approval_given pending',
      ]);
      const given = JSON.parse(written[2]!.payloadJson) as { type: string; data: Record<string, unknown> };
      expect(given.type).toBe('proposal.approval_given');
      expect(given.data['actor']).toBe(ada.id);
      expect(given.data['approvals']).toEqual({ required: 2, roles: [], given: 1, approvers: [ada.id] });
      expect(given.data['highImpact']).toEqual([
        { field: 'amount', text: '12,500.00 USD' },
        { field: 'destination_account_id', text: '…er-9' },
      ]);
      const created = JSON.parse(written[0]!.payloadJson) as { data: Record<string, unknown> };
      expect(created.data['approvals']).toEqual({ required: 2, roles: [], given: 0, approvers: [] });
      // The new rows are sealed like every other: the dispatcher sends them.
      for (const r of written) expect(checkDeliverySeal(r, sealKey)).toEqual({ kind: 'intact' });
      // The approval that completes the quorum is a decision naming both approvers.
      const bob = approver('acme', 'bob');
      await engine.proposals.approve({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: bob,
        seenDigest: proposal.digest,
      });
      const decided = (await rows(store, 'acme')).find((r) => r.type === 'proposal.decided')!;
      expect(
        (JSON.parse(decided.payloadJson) as { data: Record<string, unknown> }).data['approvals'],
      ).toEqual({
        required: 2,
        roles: [],
        given: 2,
        approvers: [ada.id, bob.id],
      });
    } finally {
      await engine.close();
    }
  });

  it('records declined, expired and superseded (with the new proposal created) as decisions', async () => {
    const store = await open();
    const { engine, clock } = await engineOn(store);
    try {
      const declined = await proposePayment(engine, 'acme', 'inv-104', 'run-a');
      await engine.proposals.decline({
        tenant: 'acme',
        proposalId: declined.id,
        actor: approver(),
        reason: 'no',
      });
      const edited = await proposeDraft(engine);
      const edit = await engine.proposals.edit({
        tenant: 'acme',
        proposalId: edited.id,
        editor: approver('acme', 'bob'),
        changes: { subject: 'Season opens Saturday' },
      });
      expect(edit.kind).toBe('edited');
      clock.advance(3 * 3_600_000);
      expect(await engine.sweeps.expireDue()).toBeGreaterThan(0);
      const webhooks = (await rows(store, 'acme')).filter((r) => r.channel === 'webhook');
      const statuses = webhooks.map(
        (r) => `${r.proposalId === declined.id ? 'A' : r.proposalId === edited.id ? 'B' : 'C'} ${summary(r)}`,
      );
      expect(statuses).toEqual([
        'A webhook proposal.created pending',
        'A webhook proposal.decided declined',
        'B webhook proposal.created pending',
        'B webhook proposal.decided superseded',
        'C webhook proposal.created pending',
        'C webhook proposal.decided expired',
      ]);
      const superseded = JSON.parse(webhooks[3]!.payloadJson) as { data: Record<string, unknown> };
      expect(superseded.data['supersededBy']).toBe(webhooks[4]!.proposalId);
    } finally {
      await engine.close();
    }
  });

  it('a lost provider response is needs_reconciliation, and its reconciliation one reconciled event', async () => {
    const store = await open();
    const world = demoWorld();
    world.provider.failWhen((r) => r.reference === 'inv-104', 'timeout_after_commit');
    const { engine } = await engineOn(store, undefined, world);
    try {
      const proposal = await proposePayment(engine);
      const done = await engine.proposals.approveAndExecute({
        tenant: 'acme',
        proposalId: proposal.id,
        approver: approver(),
        seenDigest: proposal.digest,
      });
      expect(done.kind === 'completed' && done.outcome.kind).toBe('needs_reconciliation');
      expect(
        (await engine.proposals.reconcile({ tenant: 'acme', proposalId: proposal.id, actor: approver() }))
          .kind,
      ).toBe('reconciled');
      const webhooks = (await rows(store, 'acme')).filter((r) => r.channel === 'webhook');
      expect(webhooks.map(summary)).toEqual([
        'webhook proposal.created pending',
        'webhook proposal.decided approved',
        'webhook proposal.outcome needs_reconciliation',
        'webhook proposal.outcome reconciled',
      ]);
      const last = JSON.parse(webhooks[3]!.payloadJson) as { data: Record<string, unknown> };
      expect(last.data['resolution']).toBe('succeeded');
    } finally {
      await engine.close();
    }
  });

  it('a step that rolls back leaves no outbox row (same transaction)', async () => {
    const store = await open();
    const { engine } = await engineOn(store, 'approved');
    try {
      const proposal = await proposePayment(engine);
      await expect(
        engine.proposals.approve({
          tenant: 'acme',
          proposalId: proposal.id,
          approver: approver(),
          seenDigest: proposal.digest,
        }),
      ).rejects.toThrow('refused approved');
      expect((await engine.proposals.get('acme', proposal.id))?.status).toBe('pending');
      expect((await rows(store, 'acme')).map(summary)).toEqual([
        'webhook proposal.created pending',
        'email proposal.created pending',
      ]);
    } finally {
      await engine.close();
    }
  });

  it('keeps tenants apart: listing and redelivery never reach another tenant', async () => {
    const store = await open();
    const { engine } = await engineOn(store);
    try {
      await proposePayment(engine, 'acme');
      const admin = deliveryAdmin(store);
      const acme = await admin.list('acme', { limit: 50 });
      expect(acme).toHaveLength(2);
      expect(await admin.list('globex', { limit: 50 })).toEqual([]);
      expect(await admin.redeliver('globex', acme[0]!.id)).toBe('not_found');
      expect(await admin.redeliver('acme', acme[0]!.id)).toBe('pending');
      const claimed = await store.transaction((tx) =>
        outboxOf(tx, store.capabilities).claim({
          now: Date.now() + 1e9,
          leaseUntil: Date.now() + 2e9,
          owner: 'x',
          limit: 10,
        }),
      );
      expect(claimed.map((r) => r.tenant)).toEqual(['acme', 'acme']);
    } finally {
      await engine.close();
    }
  });
});

describe('concurrent claims', () => {
  // SQLite's claims are serialized by BEGIN IMMEDIATE (two processes: see kill-delivery.integration.test.ts;
  // two connections in one thread would only wait on each other's lock).
  const pairs: readonly [string, () => Promise<[Store, Store]>][] = [
    [
      `two PostgreSQL pools on one schema (${pg.label})`,
      async () => {
        const schema = pg.newSchema();
        return [await pg.store({ schema }), await pg.store({ schema })];
      },
    ],
  ];
  it.each(pairs)('never lease one delivery to two dispatchers (%s)', async (_name, open) => {
    const [a, b] = await open();
    const operations = demoOperations(demoWorld());
    const engine = await createEngine({
      store: a,
      operations,
      limits: false,
      stepWriters: [notificationOutbox({ channels: ['webhook', 'email'], operations })],
    });
    await b.migrate();
    try {
      for (let i = 0; i < 15; i++) await proposePayment(engine, 'acme', 'inv-104', `run-${i}`);
      const now = Date.now() + 1e9;
      const claim = (store: Store, owner: string) =>
        store.transaction((tx) =>
          outboxOf(tx, store.capabilities).claim({ now, leaseUntil: now + 60_000, owner, limit: 7 }),
        );
      const rounds = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => claim(i % 2 === 0 ? a : b, `d${i}`)));
      const ids = rounds.flat().map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(30);
      for (const [i, round] of rounds.entries()) for (const r of round) expect(r.leaseOwner).toBe(`d${i}`);
    } finally {
      await engine.close();
      await b.close();
    }
  });
});
