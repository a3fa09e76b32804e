import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describeStoreTarget } from '../../src/store/open-store.js';
import { PgliteStore } from '../../src/store/pglite/index.js';
import { openPglite, type PgliteDatabase, pglitePool } from '../../src/store/pglite/pglite-pool.js';
import { type PgPool, PostgresStore } from '../../src/store/postgres/index.js';

/** The real server the PostgreSQL tests use, from COUNTERSIGN_TEST_PG_URL, or undefined (embedded PGlite). */
export const TEST_PG_URL: string | undefined = process.env['COUNTERSIGN_TEST_PG_URL'] || undefined;

/** Where a PostgreSQL test runs: a real server or the embedded PGlite, with a fresh schema per store. */
export interface TestPostgres {
  readonly kind: 'server' | 'pglite';
  /** For describe titles: `real server postgres://…` or `embedded PGlite`. */
  readonly label: string;
  /** The server URL (real server only): child processes and the CLI can reach it. */
  readonly url: string | undefined;
  /** A new schema name `cs_test_<random>`, dropped by `cleanup()`. */
  newSchema(): string;
  /**
   * A store in `schema` (a fresh one by default; pass the same schema twice for two instances
   * on one database): a {@link PostgresStore} on the server, a {@link PgliteStore} on the file's
   * one embedded database. Not migrated; closing it ends its pool (never the embedded database).
   */
  store(options?: { readonly schema?: string; readonly max?: number }): Promise<PostgresStore | PgliteStore>;
  /** Drops every schema made here and closes the embedded database. */
  cleanup(): Promise<void>;
  /** Drops one schema made here (the database stays open for the next store). */
  dropSchema(schema: string): Promise<void>;
  /** Embedded PGlite only: a pool (the store's `pg` slice) on `schema`, beside the stores, for raw SQL. */
  embeddedPool?(schema: string): Promise<PgPool>;
}

/**
 * Opens the PostgreSQL test backend: the real server at COUNTERSIGN_TEST_PG_URL when set, else an
 * embedded PGlite in this process. Every store gets a schema of its own (`cs_test_<random>`), so
 * parallel test files and cases never collide; `cleanup()` drops them.
 */
export function testPostgres(): TestPostgres {
  const schemas: string[] = [];
  const newSchema = () => {
    const schema = `cs_test_${randomBytes(6).toString('hex')}`;
    schemas.push(schema);
    return schema;
  };
  if (TEST_PG_URL) {
    const url = TEST_PG_URL;
    return {
      kind: 'server',
      label: `real server ${describeStoreTarget(url)}`,
      url,
      newSchema,
      store: async (options = {}) =>
        new PostgresStore({
          connectionString: url,
          schema: options.schema ?? newSchema(),
          ...(options.max === undefined ? {} : { max: options.max }),
        }),
      dropSchema: async (schema) => {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await admin.end();
        }
      },
      cleanup: async () => {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          for (const schema of schemas.splice(0))
            await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await admin.end();
        }
      },
    };
  }
  // One PGlite database per test file, loaded on first use: suites that only import this module
  // (the adapter matrix installs no PGlite) never load it. Each store gets a schema of its own.
  let embedded: Promise<PgliteDatabase> | undefined;
  const db = () => {
    embedded ??= openPglite('memory://');
    return embedded;
  };
  const drop = async (names: readonly string[]) => {
    const pool = pglitePool(db(), undefined);
    for (const schema of names) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  };
  return {
    kind: 'pglite',
    label: 'embedded PGlite',
    url: undefined,
    newSchema,
    store: async (options = {}) => {
      const schema = options.schema ?? newSchema();
      return new PgliteStore({ database: await db(), schema });
    },
    dropSchema: async (schema) => {
      if (embedded) await drop([schema]);
    },
    embeddedPool: async (schema) => pglitePool(db(), schema),
    cleanup: async () => {
      if (!embedded) return;
      await drop(schemas.splice(0));
      await (await embedded).close();
      embedded = undefined;
    },
  };
}
