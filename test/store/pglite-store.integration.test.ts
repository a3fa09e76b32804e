import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/index.js';
import { openStore, pgliteDataDir } from '../../src/store/open-store.js';
import { PgliteStore, pgliteStore } from '../../src/store/pglite/index.js';
import { openPglite, type PgliteDatabase } from '../../src/store/pglite/pglite-pool.js';
import { StoreClosedError } from '../../src/store/store-errors.js';
import { sampleProposal, storeConformance } from '../../src/testing/index.js';
import { tempDir } from '../support/engine.js';

const FORMS = 'write pglite:DIRECTORY (e.g. pglite:./data) or pglite:memory:';

// One embedded database for the conformance cases, each store in a schema of its own: starting
// PGlite costs seconds, a schema milliseconds.
let shared: PgliteDatabase;
let schemas = 0;
beforeAll(async () => {
  shared = await openPglite('memory://');
}, 120_000);
afterAll(() => shared.close());

describe('PGlite store conformance (one database, a schema per store)', () => {
  for (const c of storeConformance(() => new PgliteStore({ database: shared, schema: `conf_${++schemas}` })))
    it(c.name, () => c.run());
});

describe('the PGlite store', () => {
  it('opens its own database in memory: PostgreSQL in this process, for one process only', async () => {
    const store = pgliteStore();
    expect(store.capabilities).toEqual({ name: 'pglite', multiProcess: false, skipLocked: true });
    await store.migrate();
    const record = sampleProposal();
    await store.transaction((tx) => tx.insertProposal(record));
    expect(await store.read((r) => r.getProposal(record.tenant, record.id))).toEqual(record);
    await store.close();
    await expect(store.read((r) => r.getProposal(record.tenant, record.id))).rejects.toThrow(
      new StoreClosedError('the PGlite store is closed'),
    );
    await expect(store.transaction((tx) => tx.insertProposal(sampleProposal()))).rejects.toBeInstanceOf(
      StoreClosedError,
    );
    await store.close();
  }, 60_000);

  it('keeps what it stored in its data directory across a close and a reopen', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const record = sampleProposal();
      const first = new PgliteStore({ dataDir: join(dir, 'data') });
      await first.migrate();
      await first.transaction((tx) => tx.insertProposal(record));
      await first.close();
      const again = await openStore(`pglite:${join(dir, 'data')}`);
      expect(again).toBeInstanceOf(PgliteStore);
      await again.migrate();
      expect(await again.read((r) => r.getProposal(record.tenant, record.id))).toEqual(record);
      await again.close();
    } finally {
      cleanup();
    }
  }, 60_000);

  it('leaves a database it was given open, and keeps stores in separate schemas apart', async () => {
    const a = new PgliteStore({ database: shared, schema: 'apart_a' });
    const b = new PgliteStore({ database: shared, schema: 'apart_b' });
    await Promise.all([a.migrate(), b.migrate()]);
    const record = sampleProposal();
    await a.transaction((tx) => tx.insertProposal(record));
    expect(await b.read((r) => r.getProposal(record.tenant, record.id))).toBeUndefined();
    await a.close();
    expect(await b.read((r) => r.getProposal(record.tenant, record.id))).toBeUndefined();
    await b.close();
    expect((await shared.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
  });

  it('refuses options it cannot honour, naming them', () => {
    expect(() => new PgliteStore({ dataDir: '/tmp/x', database: shared })).toThrow(
      new ConfigurationError('PgliteStore: pass `dataDir` or `database`, not both'),
    );
    expect(() => new PgliteStore({ dataDir: ' ' })).toThrow(
      new ConfigurationError('PgliteStore: dataDir must be a directory or memory://'),
    );
    expect(() => new PgliteStore({ schema: 'Bad-Name' })).toThrow(
      new ConfigurationError('PgliteStore: schema "Bad-Name" must be lowercase letters, digits and _'),
    );
  });
});

describe('pglite: store locations', () => {
  it('pglite:memory: is a throwaway database, pglite:DIRECTORY a directory (created if missing)', async () => {
    expect(pgliteDataDir('pglite:memory:')).toBe('memory://');
    expect(pgliteDataDir('PGLITE:memory:')).toBe('memory://');
    expect(pgliteDataDir('pglite:./data')).toBe('./data');
    expect(pgliteDataDir('pglite:/var/lib/countersign')).toBe('/var/lib/countersign');
    const store = await openStore('pglite:memory:');
    expect(store).toBeInstanceOf(PgliteStore);
    expect(store.capabilities.name).toBe('pglite');
    await store.close();
  });

  it.each([
    ['pglite:', `store: pglite: names no database: ${FORMS}`],
    ['pglite:   ', `store: pglite:    names no database: ${FORMS}`],
    ['pglite://data', `store: pglite://data is not a PGlite location (a URL is not a directory): ${FORMS}`],
    [
      'pglite:memory://',
      `store: pglite:memory:// is not a PGlite location (a URL is not a directory): ${FORMS}`,
    ],
    [
      'pglite:file:///srv/data',
      `store: pglite:file:///srv/data is not a PGlite location (a URL is not a directory): ${FORMS}`,
    ],
    ['pglite: ./data', `store: pglite: ./data has spaces around its directory: ${FORMS}`],
  ])('refuses %j with the location and the reason', async (location, message) => {
    expect(() => pgliteDataDir(location)).toThrow(new ConfigurationError(message));
    await expect(openStore(location)).rejects.toThrow(ConfigurationError);
    await expect(openStore(location)).rejects.toThrow(new ConfigurationError(message));
  });

  it('refuses a location that is a file, not a directory', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const file = join(dir, 'store.db');
      writeFileSync(file, '');
      const message = `store: pglite:${file} is a file, not a directory: ${FORMS}`;
      await expect(openStore(`pglite:${file}`)).rejects.toThrow(new ConfigurationError(message));
    } finally {
      cleanup();
    }
  });

  it('names the three forms when the location is empty', async () => {
    await expect(openStore('')).rejects.toThrow(
      new ConfigurationError(
        'store: a postgres:// URL, a pglite: location or a SQLite file path is required',
      ),
    );
  });
});
