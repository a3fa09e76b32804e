import { randomBytes } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { describeStoreTarget } from '../../src/store/open-store.js';
import {
  type PgPool,
  type PgPoolClient,
  type PgQueryResult,
  PostgresStore,
} from '../../src/store/postgres/index.js';

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
   * on one database). Not migrated; closing it ends its pool.
   */
  store(options?: { readonly schema?: string; readonly max?: number }): Promise<PostgresStore>;
  /** Drops every schema made here and closes the embedded database. */
  cleanup(): Promise<void>;
  /** Drops one schema made here (the database stays open for the next store). */
  dropSchema(schema: string): Promise<void>;
  /** Embedded PGlite only: a pool (the store's `pg` slice) on `schema`, beside the stores, for raw SQL. */
  embeddedPool?(schema: string): Promise<PgPool>;
}

/** Serializes work on PGlite's one connection: a checked-out client holds it until released. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  lock(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const acquired = this.#tail.then(() => release);
    this.#tail = this.#tail.then(() => held);
    return acquired;
  }
}

/** One PGlite database shared by the stores of a test file, each store pinned to its own schema. */
class EmbeddedPostgres {
  readonly #db: Promise<PGlite>;
  readonly #mutex = new Mutex();
  #searchPath: string | undefined;

  constructor() {
    // Loaded on first use: suites that only import this module (the adapter matrix installs no
    // PGlite) never load it.
    this.#db = import('@electric-sql/pglite').then(({ PGlite }) => PGlite.create());
  }

  ready(): Promise<PGlite> {
    return this.#db;
  }

  // PGlite runs one statement per extended-protocol query; a text without parameters may hold
  // several (as with pg's simple protocol), so it goes through exec and the last result counts.
  async #run(text: string, values: unknown[] | undefined): Promise<PgQueryResult> {
    const db = await this.#db;
    const result =
      values && values.length > 0
        ? await db.query<Record<string, unknown>>(text, values)
        : (await db.exec(text)).at(-1);
    if (!result) return { rows: [], rowCount: 0 };
    const rows = result.rows as Record<string, unknown>[];
    return { rows, rowCount: result.rowCount ?? result.affectedRows ?? rows.length };
  }

  async #acquire(schema: string): Promise<() => void> {
    const release = await this.#mutex.lock();
    try {
      if (this.#searchPath !== schema) {
        await this.#run(`CREATE SCHEMA IF NOT EXISTS ${schema}; SET search_path TO ${schema}`, undefined);
        this.#searchPath = schema;
      }
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** A pool (the store's declared `pg` slice) whose connections use `schema`. */
  pool(schema: string): PgPool {
    const connect = async (): Promise<PgPoolClient> => {
      const release = await this.#acquire(schema);
      let released = false;
      return {
        query: (text, values) => this.#run(text, values),
        release: () => {
          if (released) return;
          released = true;
          release();
        },
      };
    };
    return {
      connect,
      query: async (text, values) => {
        const client = await connect();
        try {
          return await client.query(text, values);
        } finally {
          client.release();
        }
      },
      end: async () => {},
    };
  }

  /** Drops `schemas`; with `close`, closes the database after. */
  async dropSchemas(schemas: readonly string[], close = true): Promise<void> {
    const release = await this.#mutex.lock();
    try {
      for (const schema of schemas) await this.#run(`DROP SCHEMA IF EXISTS ${schema} CASCADE`, undefined);
      this.#searchPath = undefined;
    } finally {
      release();
    }
    if (close) await (await this.#db).close();
  }
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
  let embedded: EmbeddedPostgres | undefined;
  const db = () => {
    embedded ??= new EmbeddedPostgres();
    return embedded;
  };
  return {
    kind: 'pglite',
    label: 'embedded PGlite',
    url: undefined,
    newSchema,
    store: async (options = {}) => {
      const schema = options.schema ?? newSchema();
      await db().ready();
      return new PostgresStore({ pool: db().pool(schema) });
    },
    dropSchema: async (schema) => {
      if (embedded) await embedded.dropSchemas([schema], false);
    },
    embeddedPool: async (schema) => {
      await db().ready();
      return db().pool(schema);
    },
    cleanup: async () => {
      if (embedded) await embedded.dropSchemas(schemas.splice(0));
      embedded = undefined;
    },
  };
}
