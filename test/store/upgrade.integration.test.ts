import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PrincipalDirectory } from '../../src/server/directory/principal-directory.js';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/index.js';
import { sql } from '../../src/sql/sql.js';
import { DIRECTORY_TABLES } from '../../src/store/sql/directory-tables.js';
import { SQLITE_MIGRATIONS, SqliteStore } from '../../src/store/sqlite/index.js';
import type { Store } from '../../src/store/store.js';
import { tempDir } from '../support/engine.js';
import { testPostgres } from '../support/postgres.js';

// A database made before the directory's tables were a migration: the store applied versions 1–7
// and the directory created its own tables (`CREATE TABLE IF NOT EXISTS`) beside them. It must
// open, migrate to 10 without touching its rows, and serve the directory as before.
const BEFORE = 7;

interface Raw {
  exec(statement: string): Promise<void>;
  run(statement: string, values: readonly unknown[]): Promise<void>;
}

/** Writes what the previous release's store and directory wrote: migrations 1–7, the directory's tables, one operator. */
async function previousRelease(
  raw: Raw,
  migrations: readonly { version: number; name: string; statements: readonly string[] }[],
  p: (n: number) => string,
) {
  await raw.exec(
    'CREATE TABLE IF NOT EXISTS countersign_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
  );
  for (const m of migrations.filter((m) => m.version <= BEFORE)) {
    for (const statement of m.statements) await raw.exec(statement);
    await raw.run(
      `INSERT INTO countersign_migrations (version, name, applied_at) VALUES (${p(1)}, ${p(2)}, ${p(3)})`,
      [m.version, m.name, 1],
    );
  }
  for (const statement of DIRECTORY_TABLES) await raw.exec(statement);
  await raw.run(`INSERT INTO countersign_tenants (id, name, created_at) VALUES (${p(1)}, ${p(2)}, ${p(3)})`, [
    'acme',
    'Acme',
    1,
  ]);
}

async function expectUpgraded(
  store: Store & { migrateWithReport(): Promise<{ applied: readonly { version: number }[] }> },
) {
  const report = await store.migrateWithReport();
  expect(report.applied.map((m) => m.version)).toEqual(
    SQLITE_MIGRATIONS.map((m) => m.version).filter((v) => v > BEFORE),
  );
  const directory = new PrincipalDirectory(store);
  await directory.migrate();
  expect(await directory.tenants()).toEqual(['acme']);
  const versions = await store.transaction((tx) =>
    tx.local.all(sql`SELECT version FROM countersign_migrations ORDER BY version`),
  );
  expect(versions.map((r) => Number(r['version']))).toEqual(SQLITE_MIGRATIONS.map((m) => m.version));
}

describe('a database made by the previous release upgrades', () => {
  const pg = testPostgres();
  beforeAll(async () => {
    // The embedded database takes a few seconds to start: pay it once, in the hook.
    await (await pg.store()).close();
  }, 60_000);
  afterAll(() => pg.cleanup(), 60_000);

  it('SQLite: migration 10 records the directory tables it finds, and keeps their rows', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const path = join(dir, 'old.db');
      const Database = createRequire(import.meta.url)('better-sqlite3') as new (
        p: string,
      ) => {
        exec(s: string): void;
        prepare(s: string): { run(...v: unknown[]): unknown };
        close(): void;
      };
      const db = new Database(path);
      await previousRelease(
        {
          exec: async (s) => void db.exec(s),
          run: async (s, v) => void db.prepare(s).run(...v),
        },
        SQLITE_MIGRATIONS.map((m) => ({ ...m, statements: [m.sql] })),
        () => '?',
      );
      db.close();
      const store = new SqliteStore({ path });
      try {
        await expectUpgraded(store);
      } finally {
        await store.close();
      }
    } finally {
      cleanup();
    }
  });

  it(`PostgreSQL (${pg.label}): the same`, async () => {
    const schema = pg.newSchema();
    const store = await pg.store({ schema });
    try {
      await store.transaction(async (tx) => {
        await tx.local.run(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        await previousRelease(
          {
            exec: async (s) => void (await tx.local.run(s)),
            run: async (s, v) => void (await tx.local.run(s, v)),
          },
          POSTGRES_MIGRATIONS,
          (n) => `$${n}`,
        );
      });
      await expectUpgraded(store);
    } finally {
      await store.close();
    }
  });
});
