import { describe, expect, it } from 'vitest';
import type { LocalTransaction } from '../../src/operation/define-operation.js';
import type { SqlQuery } from '../../src/sql/sql.js';
import { outboxOf } from '../../src/store/sql-outbox.js';

/** A transaction's `local` SQL that records the statements it is given and finds no rows. */
function recording(): { readonly local: LocalTransaction; readonly texts: string[] } {
  const texts: string[] = [];
  const text = (query: SqlQuery | string) =>
    typeof query === 'string' ? query : query.render('postgres').text;
  return {
    texts,
    local: {
      run: async (query) => {
        texts.push(text(query));
        return { changes: 0 };
      },
      all: async (query) => {
        texts.push(text(query));
        return [];
      },
    },
  };
}

describe('the outbox claim', () => {
  it.each([
    [{ skipLocked: true }, true],
    [{ skipLocked: false }, false],
    [{}, false],
  ])('with capabilities %j locks candidates with SKIP LOCKED: %s', async (capabilities, skips) => {
    const tx = recording();
    const claimed = await outboxOf(tx, capabilities).claim({ now: 1, leaseUntil: 2, owner: 'o', limit: 5 });
    expect(claimed).toEqual([]);
    expect(tx.texts).toHaveLength(1);
    expect(tx.texts[0]!.endsWith(' FOR UPDATE SKIP LOCKED')).toBe(skips);
    expect(tx.texts[0]).toMatch(/^SELECT tenant, id FROM countersign_outbox WHERE /);
  });
});
