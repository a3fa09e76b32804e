import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditChainer } from '../../src/audit/chain.js';
import type { AuditChainer } from '../../src/audit/chain.js';
import type { AuditEvent, PendingAuditEvent } from '../../src/audit/event.js';
import { verifyAudit } from '../../src/ledger/verify-audit.js';
import { auditRow, queueRow, QUEUE_COLUMNS } from '../../src/store/sql-audit.js';
import { AUDIT_COLUMNS } from '../../src/store/sql-columns.js';
import { AuditLedger } from '../../src/ledger/index.js';
import { sql } from '../../src/sql/sql.js';
import { CorruptAuditChainError } from '../../src/store/store-errors.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store, StoreTransaction } from '../../src/store/store.js';
import { sampleProposal } from '../../src/testing/index.js';
import { testPostgres } from '../support/postgres.js';

// Batched chaining on PostgreSQL: a transaction takes the tenant's chain head only for its last
// statement and COMMIT; one that finds it held by another process (or by two of its own store's)
// queues its events and commits without waiting; they are chained right after, in one batch
// (src/ledger/).

const backend = testPostgres();
const on = `(${backend.label})`;
const KEY = 'k'.repeat(32);
const sealed = auditChainer(KEY);
let n = 0;

const draft = (tenant: string, id = `evt_b${++n}`): PendingAuditEvent => ({
  tenant,
  proposalId: 'prp_x',
  attemptId: null,
  runId: 'run-1',
  step: 'proposed',
  actor: 'agent:a',
  reason: null,
  digests: {},
  commandId: null,
  detail: { n },
  at: 1_700_000_000_000 + n,
  id,
});

async function openMigrated(options: { schema?: string; max?: number } = {}): Promise<Store> {
  const store = await backend.store(options);
  await store.migrate();
  return store;
}

/**
 * Inserts, as a database writer would, a copy of the tenant's newest event under a new id at the
 * place its chain takes next (the head's seq + 1). Returns the copy's id.
 */
async function forgeNextEvent(store: Store, tenant: string): Promise<string> {
  const head = await store.read((tx) => tx.auditHead(tenant));
  const [newest] = await store.read((tx) =>
    tx.listAudit(tenant, { afterSeq: (head?.seq ?? 1) - 1, limit: 1 }),
  );
  const id = `evt_forged_${++n}`;
  const copy = { ...newest!, id, seq: (head?.seq ?? 0) + 1 };
  await store.transaction((tx) =>
    tx.local.run(
      sql`INSERT INTO countersign_audit_events (${sql.raw(AUDIT_COLUMNS.map(([, c]) => c).join(', '))}) VALUES (${sql.list(auditRow(copy))})`,
    ),
  );
  return id;
}

/** The audit ledger over a store, chaining with `chainer` (the sealed one unless given). */
const ledgerOf = (store: Store, chainer: AuditChainer = sealed) => new AuditLedger(store, chainer);

/**
 * Appends one event in a transaction of its own (after `before`, when given). `committed` settles
 * with the transaction; `chained` with the event as the store reported it chained (undefined when
 * it committed but could not be chained: it stays queued).
 */
function appending(
  store: Store,
  event: PendingAuditEvent,
  options: {
    readonly before?: (tx: StoreTransaction) => Promise<unknown>;
    readonly chainInBackground?: boolean;
    readonly chainer?: AuditChainer;
  } = {},
): { committed: Promise<void>; chained: Promise<AuditEvent | undefined> } {
  let reported!: (event: AuditEvent | undefined) => void;
  const chained = new Promise<AuditEvent | undefined>((resolve) => {
    reported = resolve;
  });
  const committed = ledgerOf(store, options.chainer).transaction(
    async (tx, audit) => {
      await options.before?.(tx);
      audit.append(event);
    },
    {
      chainInBackground: options.chainInBackground ?? false,
      onChained: (events) => reported(events.find((e) => e.id === event.id)),
    },
  );
  const after = committed.then(() => chained);
  // Handled here too: a caller that expects the transaction to fail awaits `committed` alone.
  after.catch(() => undefined);
  return { committed, chained: after };
}

/** Appends one event in a transaction of its own and answers it as chained (see {@link appending}). */
async function append(
  store: Store,
  event: PendingAuditEvent,
  chainer: AuditChainer = sealed,
): Promise<AuditEvent | undefined> {
  return appending(store, event, { chainer }).chained;
}

/** Writes a queue row by hand, as a crash (or a database writer) would leave it. */
async function queueByHand(store: Store, event: PendingAuditEvent, seal: string | null): Promise<void> {
  await store.transaction((tx) =>
    tx.local.run(
      sql`INSERT INTO countersign_audit_queue (${sql.raw(QUEUE_COLUMNS.join(', '))}) VALUES (${sql.list(queueRow(event, seal))})`,
    ),
  );
}

/** Holds the tenant's chain head in a transaction of its own until `release()`: others queue. */
async function holdHead(store: Store, tenant: string): Promise<{ release: () => Promise<void> }> {
  let held!: () => void;
  let release!: () => void;
  const holding = new Promise<void>((r) => {
    held = r;
  });
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const done = store.transaction(async (tx) => {
    await tx.local.all(sql`SELECT seq FROM countersign_audit_heads WHERE tenant = ${tenant} FOR UPDATE`);
    held();
    await gate;
  });
  await holding;
  return {
    release: async () => {
      release();
      await done;
    },
  };
}

beforeAll(async () => {
  await (await backend.store()).close();
}, 60_000);
afterAll(() => backend.cleanup(), 60_000);

describe.skipIf(backend.kind !== 'server')(
  `batched chaining under concurrency ${on} (needs several connections: PGlite has one)`,
  () => {
    it('a transaction that finds the head held by another process commits without waiting, and its event is chained once the head is free', async () => {
      const schema = backend.newSchema();
      const store = await openMigrated({ schema, max: 4 });
      // Another process on the same database: a second store instance.
      const other = await backend.store({ schema, max: 2 });
      try {
        // The tenant's head row exists once its first event commits (creating it waits, once).
        await append(store, draft('acme', 'evt_first'));
        // The other process holds the head (as its chaining pass or its last statement would).
        const holder = await holdHead(other, 'acme');
        const proposal = sampleProposal({ tenant: 'acme', id: 'prp_queued' });
        const b = appending(store, draft('acme', 'evt_queued'), {
          before: (tx) => tx.insertProposal(proposal),
        });
        // B's rows commit while the head is held: B never waited for it.
        for (let i = 0; i < 200 && !(await store.read((tx) => tx.getProposal('acme', 'prp_queued'))); i++)
          await new Promise((r) => setTimeout(r, 10));
        expect(await store.read((tx) => tx.getProposal('acme', 'prp_queued'))).toBeDefined();
        const queued = await store.read((tx) => tx.listQueuedAudit('acme', 10));
        expect(queued.map((q) => q.event.id)).toEqual(['evt_queued']);
        expect(sealed.acceptsQueued(queued[0]!.event, queued[0]!.seal)).toBe(true);
        await holder.release();
        // Reported by the time B's transaction resolved: chained once the head was free, sealed.
        const second = await b.chained;
        expect([second?.id, second?.seq]).toEqual(['evt_queued', 2]);
        expect(second?.chainHash).toMatch(/^[0-9a-f]{64}$/);
        expect(second?.seal).toMatch(/^[0-9a-f]{64}$/);
        expect(await store.read((tx) => tx.listQueuedAudit('acme', 10))).toEqual([]);
        expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 1, events: 2 });
      } finally {
        await other.close();
        await store.close();
      }
    });

    it('a transaction holds the head only for its last statement and COMMIT, not from its first append', async () => {
      const store = await openMigrated({ max: 4 });
      try {
        await append(store, draft('acme', 'evt_first'));
        let appended!: () => void;
        let release!: () => void;
        const appendingDone = new Promise<void>((r) => {
          appended = r;
        });
        const gate = new Promise<void>((r) => {
          release = r;
        });
        // A appends, then keeps working: it does not hold the head meanwhile.
        const slow: AuditEvent[] = [];
        const a = ledgerOf(store).transaction(
          async (_tx, audit) => {
            audit.append(draft('acme', 'evt_slow'));
            appended();
            await gate;
          },
          { onChained: (events) => slow.push(...events) },
        );
        await appendingDone;
        // B appends and commits while A is still at work: chained at once, nothing queued.
        const b = await append(store, draft('acme', 'evt_quick'));
        expect([b?.id, b?.seq]).toEqual(['evt_quick', 2]);
        expect(await store.read((tx) => tx.listQueuedAudit('acme', 10))).toEqual([]);
        release();
        await a;
        expect(slow.map((e) => [e.id, e.seq])).toEqual([['evt_slow', 3]]);
        expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 1, events: 3 });
      } finally {
        await store.close();
      }
    });

    it('with chainInBackground, a transaction that queued returns at its commit; the store’s reads and close wait for the pass', async () => {
      const schema = backend.newSchema();
      const store = await openMigrated({ schema, max: 4 });
      const other = await backend.store({ schema, max: 2 });
      try {
        await append(store, draft('acme', 'evt_first'));
        const holder = await holdHead(other, 'acme');
        // Resolves while the head is still held: committed, queued, not chained yet (not reported).
        const queued = appending(store, draft('acme', 'evt_background'), { chainInBackground: true });
        let reported: AuditEvent | undefined;
        void queued.chained.then((e) => {
          reported = e;
        });
        await queued.committed;
        expect(reported).toBeUndefined();
        const reading = store.read((tx) => tx.listAudit('acme', { limit: 10 }));
        await holder.release();
        // The read waited for the pass: this process sees its own event chained.
        expect((await reading).map((e) => [e.id, e.seq])).toEqual([
          ['evt_first', 1],
          ['evt_background', 2],
        ]);
        const chained = await queued.chained;
        expect([chained?.seq, chained?.seal]).toEqual([2, expect.stringMatching(/^[0-9a-f]{64}$/)]);
        expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 1, events: 2 });
      } finally {
        await other.close();
        await store.close();
      }
    });

    it('a transaction that queues while the place the chain takes next holds a writer’s event is refused before it commits', async () => {
      const store = await openMigrated({ max: 4 });
      try {
        await append(store, draft('acme', 'evt_first'));
        const forged = await forgeNextEvent(store, 'acme');
        const holder = await holdHead(store, 'acme');
        const proposal = sampleProposal({ tenant: 'acme', id: 'prp_refused' });
        const refused = await appending(store, draft('acme', 'evt_refused'), {
          before: (tx) => tx.insertProposal(proposal),
        }).committed.catch((error: unknown) => error);
        await holder.release();
        expect(refused).toBeInstanceOf(CorruptAuditChainError);
        expect(refused).toMatchObject({ tenant: 'acme', seq: 2 });
        // Rolled back whole: neither the proposal nor its queued event was written.
        expect(await store.read((tx) => tx.getProposal('acme', 'prp_refused'))).toBeUndefined();
        expect(await store.read((tx) => tx.listQueuedAudit('acme', 10))).toEqual([]);
        expect(await verifyAudit(store, { sealKey: KEY })).toMatchObject({
          kind: 'broken',
          seq: 2,
          eventId: forged,
          problem: 'leaf_mismatch',
        });
      } finally {
        await store.close();
      }
    });

    it('an event queued and committed before a writer takes the place it needs stays queued, never chained on top of the writer’s', async () => {
      const store = await openMigrated({ max: 4 });
      try {
        await append(store, draft('acme', 'evt_first'));
        const holder = await holdHead(store, 'acme');
        const queued = appending(store, draft('acme', 'evt_queued'), {
          before: (tx) => tx.insertProposal(sampleProposal({ tenant: 'acme', id: 'prp_queued' })),
        }).chained;
        // Committed (its pass waits for the head): the writer takes the place it was to be chained at.
        for (let i = 0; i < 200 && !(await store.read((tx) => tx.getProposal('acme', 'prp_queued'))); i++)
          await new Promise((r) => setTimeout(r, 10));
        const forged = await forgeNextEvent(store, 'acme');
        await holder.release();
        // The caller's commit stands; its event could not be chained.
        expect(await queued).toBeUndefined();
        expect(await store.read((tx) => tx.getProposal('acme', 'prp_queued'))).toBeDefined();
        expect((await store.read((tx) => tx.listQueuedAudit('acme', 10))).map((q) => q.event.id)).toEqual([
          'evt_queued',
        ]);
        expect(await ledgerOf(store).chainQueued()).toBe(0);
        const events = await store.read((tx) => tx.listAudit('acme', { limit: 10 }));
        expect(events.map((e) => e.id)).toEqual(['evt_first', forged]);
        expect(await store.read((tx) => tx.auditHead('acme'))).toMatchObject({ seq: 1 });
        expect(await verifyAudit(store, { sealKey: KEY })).toMatchObject({
          kind: 'broken',
          eventId: forged,
          problem: 'leaf_mismatch',
        });
      } finally {
        await store.close();
      }
    });

    it('a read waits for the chaining its store started for a second at most: another process holding the head does not hold the read', async () => {
      const schema = backend.newSchema();
      const store = await openMigrated({ schema, max: 4 });
      const other = await backend.store({ schema, max: 2 });
      try {
        await append(store, draft('acme', 'evt_first'));
        const holder = await holdHead(other, 'acme');
        const queued = appending(store, draft('acme', 'evt_waiting'), { chainInBackground: true });
        let reported = false;
        void queued.chained.then(() => {
          reported = true;
        });
        await queued.committed;
        const started = performance.now();
        const waiting = await store.read((tx) => tx.listQueuedAudit('acme', 10));
        const waited = performance.now() - started;
        // Answered while the head is still held: the event is committed, queued, not chained.
        expect(waiting.map((q) => q.event.id)).toEqual(['evt_waiting']);
        expect(reported).toBe(false);
        expect(waited).toBeGreaterThanOrEqual(900);
        expect(waited).toBeLessThan(5_000);
        await holder.release();
        expect((await store.read((tx) => tx.listAudit('acme', { limit: 10 }))).map((e) => e.id)).toEqual([
          'evt_first',
          'evt_waiting',
        ]);
      } finally {
        await other.close();
        await store.close();
      }
    });

    it('8 connections appending at once: one gapless chain, each transaction’s events in its own order', async () => {
      const store = await openMigrated({ max: 8 });
      try {
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, t) =>
            Promise.all(
              Array.from(
                { length: 6 },
                (_, round) =>
                  new Promise<readonly AuditEvent[]>((resolve, reject) => {
                    ledgerOf(store)
                      .transaction(
                        async (_tx, audit) => {
                          audit.append(draft('acme', `evt_${t}_${round}_1`));
                          audit.append(draft('acme', `evt_${t}_${round}_2`));
                        },
                        { onChained: resolve },
                      )
                      .catch(reject);
                  }),
              ),
            ),
          ),
        );
        const pairs = results.flat().map(([one, two]) => [one!, two!] as const);
        const seqs = pairs.flatMap(([one, two]) => [one.seq, two.seq]).sort((x, y) => x - y);
        expect(seqs).toEqual(Array.from({ length: 96 }, (_, i) => i + 1));
        for (const [one, two] of pairs) expect(two.seq).toBeGreaterThan(one.seq);
        expect(await verifyAudit(store, { sealKey: KEY })).toEqual({
          kind: 'intact',
          tenants: 1,
          events: 96,
        });
      } finally {
        await store.close();
      }
    }, 60_000);
  },
);

// SQLite never queues an event itself, but chains what a crash or a database writer left in the
// queue (`chainQueued`, `recover`) under the same checks.
const leftBehind: readonly (readonly [string, () => Promise<Store>, { chainsOnAppend: boolean }])[] = [
  [on, () => openMigrated(), { chainsOnAppend: true }],
  [
    '(sqlite)',
    async () => {
      const store = new SqliteStore({ path: ':memory:' });
      await store.migrate();
      return store;
    },
    // Under SQLite's write lock nothing queues, so an append does not look at the queue.
    { chainsOnAppend: false },
  ],
];

describe.each(leftBehind)('queued audit events left behind %s', (_, openMigrated, { chainsOnAppend }) => {
  it('a genuine queued event (a crash between commit and chaining) is chained before any later event', async () => {
    const store = await openMigrated();
    try {
      const left = draft('acme', 'evt_left');
      await queueByHand(store, left, sealed.queueSeal(left));
      expect(await verifyAudit(store, { sealKey: KEY })).toEqual({
        kind: 'intact',
        tenants: 1,
        events: 0,
        queued: 1,
      });
      if (!chainsOnAppend) expect(await ledgerOf(store).chainQueued()).toBe(1);
      const next = await append(store, draft('acme', 'evt_next'));
      expect(next?.seq).toBe(2);
      const events = await store.read((tx) => tx.listAudit('acme', { limit: 10 }));
      expect(events.map((e) => [e.id, e.seq])).toEqual([
        ['evt_left', 1],
        ['evt_next', 2],
      ]);
      expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 1, events: 2 });
    } finally {
      await store.close();
    }
  });

  it('a queue longer than one batch is chained whole, in queue order, each event once', async () => {
    const store = await openMigrated();
    try {
      const ids = Array.from({ length: 503 }, (_, i) => `evt_long_${String(i).padStart(3, '0')}`);
      await store.transaction(async (tx) => {
        for (const id of ids) {
          const left = draft('acme', id);
          await tx.local.run(
            sql`INSERT INTO countersign_audit_queue (${sql.raw(QUEUE_COLUMNS.join(', '))}) VALUES (${sql.list(queueRow(left, sealed.queueSeal(left)))})`,
          );
        }
      });
      expect(await ledgerOf(store).chainQueued()).toBe(503);
      const events = await store.read((tx) => tx.listAudit('acme', { limit: 1000 }));
      expect(events.map((e) => e.id)).toEqual(ids);
      expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 1, events: 503 });
    } finally {
      await store.close();
    }
  }, 60_000);

  it('chainQueued chains what is left for every tenant and says how many', async () => {
    const store = await openMigrated();
    try {
      for (const tenant of ['acme', 'globex', 'acme']) {
        const left = draft(tenant);
        await queueByHand(store, left, sealed.queueSeal(left));
      }
      expect(await ledgerOf(store).chainQueued()).toBe(3);
      expect(await ledgerOf(store).chainQueued()).toBe(0);
      expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 2, events: 3 });
    } finally {
      await store.close();
    }
  });

  it('a queue row the key did not seal is never chained, and verification names it', async () => {
    const store = await openMigrated();
    try {
      await append(store, draft('acme', 'evt_real'));
      const forged = { ...draft('acme', 'evt_forged'), actor: 'user:boss', step: 'approved' as const };
      await queueByHand(store, forged, null);
      const reSealed = draft('acme', 'evt_wrong_key');
      await queueByHand(store, reSealed, auditChainer('x'.repeat(32)).queueSeal(reSealed));
      const after = await append(store, draft('acme', 'evt_after'));
      expect(after?.seq).toBe(2);
      expect(await ledgerOf(store).chainQueued()).toBe(0);
      const events = await store.read((tx) => tx.listAudit('acme', { limit: 10 }));
      expect(events.map((e) => e.id)).toEqual(['evt_real', 'evt_after']);
      const result = await verifyAudit(store, { sealKey: KEY });
      expect(result).toMatchObject({
        kind: 'broken',
        tenant: 'acme',
        eventId: 'evt_forged',
        problem: 'seal_missing',
      });
      await store.transaction((tx) =>
        tx.local.run(sql`DELETE FROM countersign_audit_queue WHERE id = 'evt_forged'`),
      );
      expect(await verifyAudit(store, { sealKey: KEY })).toMatchObject({
        kind: 'broken',
        eventId: 'evt_wrong_key',
        problem: 'seal_mismatch',
      });
    } finally {
      await store.close();
    }
  });

  it('a genuine queue row inserted again after it was chained is never chained twice, and verification names it', async () => {
    const store = await openMigrated();
    try {
      const approved = { ...draft('acme', 'evt_approved'), step: 'approved' as const, actor: 'user:ann' };
      const copy = { event: approved, seal: sealed.queueSeal(approved) };
      await queueByHand(store, copy.event, copy.seal);
      expect(await ledgerOf(store).chainQueued()).toBe(1);
      // The copy a database writer took while the row waited, inserted again with its valid seal.
      await queueByHand(store, copy.event, copy.seal);
      const next = await append(store, draft('acme', 'evt_next'));
      expect(next?.seq).toBe(2);
      expect(await ledgerOf(store).chainQueued()).toBe(0);
      const events = await store.read((tx) => tx.listAudit('acme', { limit: 10 }));
      expect(events.map((e) => e.id)).toEqual(['evt_approved', 'evt_next']);
      expect(await verifyAudit(store, { sealKey: KEY })).toMatchObject({
        kind: 'broken',
        tenant: 'acme',
        seq: 3,
        eventId: 'evt_approved',
        problem: 'duplicate_event',
      });
    } finally {
      await store.close();
    }
  });

  it('an event a writer inserted where the chain goes next refuses the append (CorruptAuditChainError, nothing written), and queued events stay queued', async () => {
    const store = await openMigrated();
    try {
      await append(store, draft('acme', 'evt_real'));
      const forged = await forgeNextEvent(store, 'acme');
      const appendRefused = () =>
        appending(store, draft('acme'), {
          before: (tx) => tx.insertProposal(sampleProposal({ tenant: 'acme', id: 'prp_refused' })),
        }).committed;
      const refused = await appendRefused().catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(CorruptAuditChainError);
      expect(refused).toMatchObject({ tenant: 'acme', seq: 2 });
      expect(await store.read((tx) => tx.getProposal('acme', 'prp_refused'))).toBeUndefined();
      expect(await store.read((tx) => tx.auditHead('acme'))).toMatchObject({ seq: 1 });
      // A batch of queued events (one longer than the place) is never chained around the writer's event.
      for (const id of ['evt_left_1', 'evt_left_2']) {
        const left = draft('acme', id);
        await queueByHand(store, left, sealed.queueSeal(left));
      }
      expect(await ledgerOf(store).chainQueued()).toBe(0);
      // Another tenant's queue is chained all the same.
      const other = draft('globex', 'evt_globex');
      await queueByHand(store, other, sealed.queueSeal(other));
      expect(await ledgerOf(store).chainQueued()).toBe(1);
      if (chainsOnAppend)
        expect(await appendRefused().catch((error: unknown) => error)).toBeInstanceOf(CorruptAuditChainError);
      expect((await store.read((tx) => tx.listQueuedAudit('acme', 10))).map((q) => q.event.id)).toEqual([
        'evt_left_1',
        'evt_left_2',
      ]);
      const events = await store.read((tx) => tx.listAudit('acme', { limit: 10 }));
      expect(events.map((e) => e.id)).toEqual(['evt_real', forged]);
      expect(await verifyAudit(store, { sealKey: KEY })).toMatchObject({
        kind: 'broken',
        tenant: 'acme',
        seq: 2,
        eventId: forged,
        problem: 'leaf_mismatch',
      });
    } finally {
      await store.close();
    }
  });

  it('the chain refuses a second event with an id it holds', async () => {
    const store = await openMigrated();
    try {
      const first = await append(store, draft('acme', 'evt_once'));
      await expect(appending(store, draft('acme', 'evt_once')).committed).rejects.toThrow(/unique|UNIQUE/);
      const events = await store.read((tx) => tx.listAudit('acme', { limit: 10 }));
      expect(events.map((e) => [e.id, e.seq])).toEqual([['evt_once', first?.seq]]);
      expect(await verifyAudit(store, { sealKey: KEY })).toEqual({ kind: 'intact', tenants: 1, events: 1 });
    } finally {
      await store.close();
    }
  });

  it('a second event with an id the chain holds, re-hashed by a writer who dropped the unique index, is named without a key', async () => {
    const store = await openMigrated();
    try {
      const unsealed = auditChainer(undefined);
      await append(store, draft('acme', 'evt_paid'), unsealed);
      const head = (await append(store, draft('acme', 'evt_later'), unsealed))!;
      const [first] = await store.read((tx) => tx.listAudit('acme', { limit: 1 }));
      const copy = unsealed.link(
        { seq: head.seq, chainHash: head.chainHash },
        { ...first!, at: first!.at + 1 },
      );
      await store.transaction(async (tx) => {
        await tx.local.run(sql`DROP INDEX countersign_audit_events_id`);
        await tx.local.run(
          sql`INSERT INTO countersign_audit_events (${sql.raw(AUDIT_COLUMNS.map(([, c]) => c).join(', '))}) VALUES (${sql.list(auditRow(copy))})`,
        );
        await tx.local.run(
          sql`UPDATE countersign_audit_heads SET seq = ${copy.seq}, chain_hash = ${copy.chainHash} WHERE tenant = 'acme'`,
        );
      });
      expect(await verifyAudit(store)).toMatchObject({
        kind: 'broken',
        tenant: 'acme',
        seq: 3,
        eventId: 'evt_paid',
        problem: 'duplicate_event',
      });
    } finally {
      await store.close();
    }
  });
});
