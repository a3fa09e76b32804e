import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { createDispatcher, DEFAULT_RETAIN_MS } from '../../src/notify/dispatcher.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { type DeliveryStatus, type OutboxRecord, outboxOf } from '../../src/store/sql-outbox.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, type BackendName } from '../support/backends.js';
import { ManualClock, tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';

// Finished deliveries are deleted once older than the retention; pending ones never are.

const pg = testPostgres();
const temp = tempDir();
beforeAll(async () => {
  await (await pg.store()).close();
}, 60_000);
afterAll(async () => {
  await pg.cleanup();
  temp.cleanup();
}, 60_000);

/** How each of {@link BACKENDS} opens a fresh store here. */
const openOn: Readonly<Record<BackendName, () => Promise<Store>>> = {
  sqlite: async () => new SqliteStore({ path: join(temp.dir, `retention-${Math.random()}.db`) }),
  postgres: () => pg.store(),
};

const DAY = 86_400_000;
let n = 0;
function delivery(tenant: string, status: DeliveryStatus, retryFrom: number): OutboxRecord {
  n++;
  return {
    tenant,
    id: `dlv_r${n}`,
    eventId: `evt_r${n}`,
    channel: 'webhook',
    type: 'proposal.created',
    proposalId: `prp_r${n}`,
    payloadJson: '{}',
    status,
    attempts: status === 'pending' ? 0 : 1,
    nextAt: retryFrom,
    leaseUntil: null,
    leaseOwner: null,
    lastError: null,
    lastAttemptAt: status === 'pending' ? null : retryFrom,
    deliveredAt: status === 'delivered' ? retryFrom : null,
    retryFrom,
    createdAt: retryFrom,
    seal: null,
  };
}

async function ids(store: Store, tenant: string): Promise<string[]> {
  const rows = await store.transaction((tx) =>
    outboxOf(tx, store.capabilities).list(tenant, { limit: 1000 }),
  );
  return rows.map((r) => r.id).sort();
}

describe.each(BACKENDS)('notification retention (%s)', (backend) => {
  const open = openOn[backend];
  it('deletes finished deliveries older than the retention, of every tenant, and keeps pending and recent ones', async () => {
    const store = await open();
    try {
      await store.migrate();
      const clock = new ManualClock();
      const now = clock.now();
      const rows = [
        delivery('acme', 'delivered', now - 31 * DAY),
        delivery('acme', 'dead', now - 40 * DAY),
        delivery('acme', 'skipped', now - 30 * DAY - 1),
        delivery('acme', 'pending', now - 90 * DAY),
        delivery('acme', 'delivered', now - 29 * DAY),
        delivery('globex', 'delivered', now - 45 * DAY),
        delivery('globex', 'dead', now - DAY),
      ];
      await store.transaction(async (tx) => {
        for (const row of rows) await outboxOf(tx, store.capabilities).insert(row);
      });
      const dispatcher = createDispatcher({ store, senders: {}, clock });
      expect(await dispatcher.pruneOnce()).toBe(4);
      expect(await ids(store, 'acme')).toEqual([rows[3]!.id, rows[4]!.id].sort());
      expect(await ids(store, 'globex')).toEqual([rows[6]!.id]);
      expect(await dispatcher.pruneOnce()).toBe(0);
      // Kept forever when asked: nothing is deleted however old.
      clock.advance(365 * DAY);
      expect(await createDispatcher({ store, senders: {}, clock, retainMs: false }).pruneOnce()).toBe(0);
      expect(await ids(store, 'globex')).toEqual([rows[6]!.id]);
    } finally {
      await store.close();
    }
  });

  it('deletes a large backlog in batches, leaving none behind', async () => {
    const store = await open();
    try {
      await store.migrate();
      const clock = new ManualClock();
      await store.transaction(async (tx) => {
        for (let i = 0; i < 1_203; i++)
          await outboxOf(tx, store.capabilities).insert(
            delivery('acme', 'delivered', clock.now() - 60 * DAY),
          );
      });
      expect(await createDispatcher({ store, senders: {}, clock }).pruneOnce()).toBe(1_203);
      expect(await ids(store, 'acme')).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('retention setting', () => {
  it('defaults to 30 days and refuses a retention that is not whole milliseconds above 0', () => {
    expect(DEFAULT_RETAIN_MS).toBe(30 * DAY);
    const store = new SqliteStore({ path: ':memory:' });
    for (const retainMs of [0, -1, 1.5, Number.POSITIVE_INFINITY])
      expect(() => createDispatcher({ store, senders: {}, retainMs })).toThrow(ConfigurationError);
  });
});
