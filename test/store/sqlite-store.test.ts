import { describe, it } from 'vitest';
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
