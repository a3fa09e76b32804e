import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOperations, demoWorld } from '../../src/demo/demo-world.js';
import { createEngine, type Engine } from '../../src/index.js';
import { type LiveEvent, readLiveEvents } from '../../src/notify/live-feed.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { outboxOf } from '../../src/store/sql-outbox.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { approver, ManualClock, proposePayment, tempDir } from '../support/engine.js';
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
  sqlite: async () => new SqliteStore({ path: join(temp.dir, `feed-${Math.random()}.db`) }),
  postgres: () => pg.store(),
};

const line = (e: LiveEvent) =>
  `${e.type} ${e.data.status}${e.data.resolution ? ` (${e.data.resolution})` : ''}`;

/** Reads the whole feed after `afterSeq`, `limit` events of the chain at a time. */
async function readAll(engine: Engine, tenant: string, limit: number, afterSeq = 0): Promise<LiveEvent[]> {
  const out: LiveEvent[] = [];
  let read = await readLiveEvents(engine, tenant, { afterSeq }, limit);
  out.push(...read.events);
  while (read.more) {
    read = await readLiveEvents(engine, tenant, read.position, limit);
    out.push(...read.events);
  }
  return out;
}

describe.each(BACKENDS)('the live feed from the audit chain (%s)', (backend) => {
  const open = openOn[backend];
  let store: Store;
  let engine: Engine;
  let proposalId: string;

  beforeAll(async () => {
    store = await open();
    const world = demoWorld();
    world.provider.failWhen((r) => r.reference === 'inv-104', 'timeout_after_commit');
    // No notifications configured: no step writer, so no outbox rows. The feed needs none.
    engine = await createEngine({ store, operations: demoOperations(world), clock: new ManualClock() });
    const proposal = await proposePayment(engine);
    proposalId = proposal.id;
    const done = await engine.proposals.approveAndExecute({
      tenant: 'acme',
      proposalId: proposal.id,
      approver: approver(),
      seenDigest: proposal.digest,
    });
    expect(done.kind === 'completed' && done.outcome.kind).toBe('needs_reconciliation');
    const reconciled = await engine.proposals.reconcile({
      tenant: 'acme',
      proposalId: proposal.id,
      actor: approver(),
    });
    expect(reconciled.kind).toBe('reconciled');
    await proposePayment(engine, 'globex', 'inv-201');
  }, 60_000);
  afterAll(async () => {
    await engine.close();
  });

  it('maps the chain through the notifications mapping, with no outbox rows at all', async () => {
    const outbox = await store.transaction((tx) =>
      outboxOf(tx, store.capabilities).list('acme', { limit: 10 }),
    );
    expect(outbox).toEqual([]);
    const events = await readAll(engine, 'acme', 200);
    expect(events.map(line)).toEqual([
      'proposal.created pending',
      'proposal.decided approved',
      'proposal.outcome needs_reconciliation',
      'proposal.outcome reconciled (succeeded)',
    ]);
    expect(events.every((e) => e.data.proposalId === proposalId && e.data.operation === 'invoice.pay')).toBe(
      true,
    );
    const seqs = events.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('reads the same events one chain event at a time: a reconciliation split across reads is still "reconciled"', async () => {
    const whole = await readAll(engine, 'acme', 200);
    expect(await readAll(engine, 'acme', 1)).toEqual(whole);
    // Resuming after any id gives exactly the events after it.
    for (const [i, e] of whole.entries())
      expect((await readAll(engine, 'acme', 200, e.seq)).map((x) => x.seq)).toEqual(
        whole.slice(i + 1).map((x) => x.seq),
      );
  });

  it('starts at the head without a resume point (or with one beyond it), and reads only its own tenant', async () => {
    const head = (await store.transaction((tx) => tx.auditHead('acme')))!.seq;
    const fresh = await readLiveEvents(engine, 'acme', {});
    expect(fresh.events).toEqual([]);
    expect(fresh.position.afterSeq).toBe(head);
    const beyond = await readLiveEvents(engine, 'acme', { afterSeq: head + 1000 });
    expect([beyond.events.length, beyond.position.afterSeq]).toEqual([0, head]);
    const globex = await readAll(engine, 'globex', 200);
    expect(globex.map(line)).toEqual(['proposal.created pending']);
    expect(globex[0]!.data.proposalId).not.toBe(proposalId);
  });
});
