import { describe, expect, it } from 'vitest';
import { sql } from '../../src/sql/sql.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { sampleProposal } from '../../src/testing/index.js';

async function counters(store: SqliteStore) {
  // The counters are the store's own table: read through a transaction's local SQL.
  const rows = await store.transaction((tx) =>
    tx.local.all(
      sql`SELECT requested_by, second, created FROM countersign_proposal_rates WHERE tenant = ${'umbrella'} ORDER BY second, requested_by`,
    ),
  );
  return rows.map((r) => [r['requested_by'], Number(r['second']), Number(r['created'])]);
}

describe('proposal rate counters (SQLite)', () => {
  it('each insert counts in its requester’s and its tenant’s second, in the insert’s transaction', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate();
    await store.transaction(async (tx) => {
      for (const [requestedBy, createdAt] of [
        ['agent:a', 1_000],
        ['agent:a', 1_999],
        ['agent:b', 1_500],
        ['agent:a', 2_000],
      ] as const)
        await tx.insertProposal(sampleProposal({ tenant: 'umbrella', requestedBy, createdAt }));
    });
    await expect(
      store.transaction(async (tx) => {
        await tx.insertProposal(
          sampleProposal({ tenant: 'umbrella', requestedBy: 'agent:b', createdAt: 2_500 }),
        );
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    expect(await counters(store)).toEqual([
      ['', 1, 3],
      ['agent:a', 1, 2],
      ['agent:b', 1, 1],
      ['', 2, 1],
      ['agent:a', 2, 1],
    ]);
    await store.close();
  });

  it('the first proposal of a second deletes the tenant’s counters older than two minutes', async () => {
    const store = new SqliteStore({ path: ':memory:' });
    await store.migrate();
    const propose = (requestedBy: string, createdAt: number) =>
      store.transaction((tx) =>
        tx.insertProposal(sampleProposal({ tenant: 'umbrella', requestedBy, createdAt })),
      );
    await propose('agent:a', 1_000);
    await propose('agent:b', 60_000);
    await propose('agent:a', 121_000);
    expect((await counters(store)).map(([, second]) => second)).toEqual([1, 1, 60, 60, 121, 121]);
    await propose('agent:c', 122_500);
    expect(await counters(store)).toEqual([
      ['', 60, 1],
      ['agent:b', 60, 1],
      ['', 121, 1],
      ['agent:a', 121, 1],
      ['', 122, 1],
      ['agent:c', 122, 1],
    ]);
    await store.close();
  });
});
