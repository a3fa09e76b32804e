import { describe, expect, it } from 'vitest';
import { sql } from '../../src/sql/sql.js';
import { SqliteDriver, STATEMENT_CACHE_SIZE } from '../../src/store/sqlite/sqlite-driver.js';
import { SqliteStore } from '../../src/store/sqlite/index.js';
import { storeConformance } from '../../src/testing/index.js';
import { tempDir } from '../support/engine.js';

describe('SQLite store conformance (in memory)', () => {
  for (const c of storeConformance(() => new SqliteStore({ path: ':memory:' }))) it(c.name, () => c.run());
});

describe('SQLite store conformance (WAL file)', () => {
  for (const c of storeConformance(() => {
    const { dir } = tempDir();
    return new SqliteStore({ path: `${dir}/conformance.db` });
  })) {
    it(c.name, () => c.run());
  }
});

describe('SQLite prepared statements', () => {
  it('keeps at most STATEMENT_CACHE_SIZE of them however many texts run, and runs an evicted one again', async () => {
    const driver = new SqliteDriver({ path: ':memory:' });
    try {
      const texts = Array.from({ length: STATEMENT_CACHE_SIZE + 200 }, (_, i) => `SELECT ${i} AS n`);
      await driver.transaction(async (s) => {
        for (const text of texts)
          expect(await s.all(sql.raw(text))).toEqual([{ n: Number(text.slice(7, -5)) }]);
      });
      expect(driver.cachedStatements).toBe(STATEMENT_CACHE_SIZE);
      await driver.transaction(async (s) => {
        expect(await s.all(sql.raw(texts[0]!))).toEqual([{ n: 0 }]);
      });
      expect(driver.cachedStatements).toBe(STATEMENT_CACHE_SIZE);
    } finally {
      await driver.close();
    }
  });
});
