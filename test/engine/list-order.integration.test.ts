import { beforeAll, afterEach, describe, expect, it } from 'vitest';
import type { ProposalSort } from '../../src/store/index.js';
import { sampleProposal } from '../../src/testing/index.js';
import type { Store } from '../../src/store/store.js';
import { BACKENDS, warmUp } from '../support/backends.js';
import { type Harness, harnessOn } from '../support/engine.js';

describe.each(BACKENDS)('on %s', (backend) => {
  beforeAll(() => warmUp(backend), 120_000);
  let h: Harness<Store> | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const preview = (minor: number | null, title: string) =>
    JSON.stringify(minor === null ? { title } : { title, amount: { minor, currency: 'USD' } });

  async function seeded() {
    h = await harnessOn(backend);
    // Amounts with ties and previews without one (they sort last, by id), over distinct expiries.
    const amounts = [500, null, 90_000, 7_000, null, 500, 12, null, 90_000];
    const records = amounts.map((minor, i) =>
      sampleProposal({ previewJson: preview(minor, `Pay ${i}`), expiresAt: 5_000_000 - i * 1_000 }),
    );
    const foreign = sampleProposal({ tenant: 'globex', previewJson: preview(1_000_000, 'Pay 0') });
    await h.store.transaction(async (tx) => {
      for (const r of [...records, foreign]) await tx.insertProposal(r);
    });
    return { engine: h.engine, records };
  }

  async function allPages(engine: Harness['engine'], sort: ProposalSort, limit: number) {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < 20; n++) {
      const page = await engine.proposals.list('acme', { sort, limit, ...(cursor ? { cursor } : {}) });
      ids.push(...page.items.map((p) => p.id));
      cursor = page.nextCursor;
      if (!cursor) return ids;
    }
    throw new Error('pages never ended');
  }

  describe('engine.list orders and pages', () => {
    it('pages every order completely and without repeats, whatever the page size', async () => {
      const { engine, records } = await seeded();
      const byId = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);
      const amountOf = (json: string) =>
        (JSON.parse(json) as { amount?: { minor: number } }).amount?.minor ?? -1;
      const expected: Record<ProposalSort, string[]> = {
        created: [...records].sort((a, b) => b.createdAt - a.createdAt || byId(a.id, b.id)).map((r) => r.id),
        expires: [...records].sort((a, b) => a.expiresAt - b.expiresAt || -byId(a.id, b.id)).map((r) => r.id),
        amount: [...records]
          .sort((a, b) => amountOf(b.previewJson) - amountOf(a.previewJson) || byId(a.id, b.id))
          .map((r) => r.id),
      };
      for (const sort of ['created', 'expires', 'amount'] as const)
        for (const limit of [1, 2, 4, 50])
          expect(await allPages(engine, sort, limit), `${sort} by ${limit}`).toEqual(expected[sort]);
    });

    it('starts at the first page when a cursor comes from another order, and counts all matches', async () => {
      const { engine, records } = await seeded();
      const amount = await engine.proposals.list('acme', { sort: 'amount', limit: 3 });
      expect(amount.nextCursor).toBeDefined();
      const created = await engine.proposals.list('acme', {
        sort: 'created',
        limit: 3,
        cursor: amount.nextCursor!,
      });
      expect(created.items.map((p) => p.id)).toEqual(
        (await engine.proposals.list('acme', { limit: 3 })).items.map((p) => p.id),
      );
      expect(await engine.proposals.count('acme')).toBe(records.length);
      expect(await engine.proposals.count('acme', { search: 'pay 0' })).toBe(1);
      expect(await engine.proposals.count('globex')).toBe(1);
      expect(await engine.proposals.count('acme', { status: 'declined' })).toBe(0);
    });
  });
});
