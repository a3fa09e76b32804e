import { describe, expect, it } from 'vitest';
import { sql } from '../../src/sql/sql.js';
import {
  SQLITE_CHECKPOINT_BYTES,
  SqliteDriver,
  STATEMENT_CACHE_SIZE,
} from '../../src/store/sqlite/sqlite-driver.js';
import { ConfigurationError } from '../../src/index.js';
import { SQLITE_PAGE_SIZE, SqliteStore } from '../../src/store/sqlite/index.js';
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

describe('SQLite page size', () => {
  const pageSizeOf = (store: SqliteStore) =>
    (store.database as { pragma(s: string, o: { simple: true }): unknown }).pragma('page_size', {
      simple: true,
    });

  it('makes a new database with SQLITE_PAGE_SIZE pages, or the pageSize asked for', async () => {
    const { dir } = tempDir();
    const made = new SqliteStore({ path: `${dir}/default.db` });
    const asked = new SqliteStore({ path: `${dir}/asked.db`, pageSize: 4096 });
    try {
      await made.migrate();
      await asked.migrate();
      expect(SQLITE_PAGE_SIZE).toBe(1024);
      expect(pageSizeOf(made)).toBe(SQLITE_PAGE_SIZE);
      expect(pageSizeOf(asked)).toBe(4096);
    } finally {
      await made.close();
      await asked.close();
    }
  });

  it('leaves an existing database at its own page size, and its rows readable', async () => {
    const { dir } = tempDir();
    const path = `${dir}/existing.db`;
    const first = new SqliteStore({ path, pageSize: 4096 });
    await first.migrate();
    await first.transaction((tx) => tx.local.run('CREATE TABLE app_notes (n INTEGER)'));
    await first.transaction((tx) => tx.local.run('INSERT INTO app_notes (n) VALUES (7)'));
    await first.close();
    const reopened = new SqliteStore({ path });
    try {
      expect(pageSizeOf(reopened)).toBe(4096);
      expect(await reopened.transaction((tx) => tx.local.all('SELECT n FROM app_notes'))).toEqual([{ n: 7 }]);
    } finally {
      await reopened.close();
    }
  });

  it('checkpoints every 4 MiB of WAL whatever the page size, as SQLite does by default at 4 KiB pages', async () => {
    const { dir } = tempDir();
    const pragma = (store: SqliteStore, name: string) =>
      (store.database as { pragma(s: string, o: { simple: true }): unknown }).pragma(name, { simple: true });
    const small = new SqliteStore({ path: `${dir}/small.db` });
    const large = new SqliteStore({ path: `${dir}/large.db`, pageSize: 4096 });
    try {
      expect(SQLITE_CHECKPOINT_BYTES).toBe(4 * 1024 * 1024);
      expect(pragma(small, 'wal_autocheckpoint')).toBe(4096);
      expect(pragma(large, 'wal_autocheckpoint')).toBe(1024);
    } finally {
      await small.close();
      await large.close();
    }
  });

  it.each([1000, 256, 131_072, 1.5])('refuses pageSize %s, naming the option', (pageSize) => {
    expect(() => new SqliteStore({ path: ':memory:', pageSize })).toThrow(
      new ConfigurationError(`pageSize: ${pageSize} is not a power of two from 512 to 65536`),
    );
  });
});
