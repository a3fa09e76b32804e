import type { PgPool, PgPoolClient, PgQueryable } from '../src/store/postgres/pg-driver.js';
import type { SqliteDatabase } from '../src/store/sqlite/sqlite-store.js';

/** One statement a store ran while recording, with the parameters of its first run. */
export interface RecordedStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/** Collects the distinct statements a store runs between `start()` and `stop()`. */
export class StatementLog {
  #recording: Map<string, readonly unknown[]> | undefined;

  start(): void {
    this.#recording = new Map();
  }

  stop(): RecordedStatement[] {
    const out = [...(this.#recording ?? new Map<string, readonly unknown[]>())].map(([sql, params]) => ({
      sql,
      params,
    }));
    this.#recording = undefined;
    return out;
  }

  note(sql: string, params: readonly unknown[] | undefined): void {
    if (this.#recording && !this.#recording.has(sql)) this.#recording.set(sql, params ?? []);
  }
}

/** A better-sqlite3 database whose statements are noted in `log` as they run. */
export function recordingSqlite(db: SqliteDatabase, log: StatementLog): SqliteDatabase {
  return {
    prepare(sql) {
      const statement = db.prepare(sql);
      return {
        run: (...params) => {
          log.note(sql, params);
          return statement.run(...params);
        },
        get: (...params) => {
          log.note(sql, params);
          return statement.get(...params);
        },
        all: (...params) => {
          log.note(sql, params);
          return statement.all(...params);
        },
      };
    },
    exec: (sql) => db.exec(sql),
    pragma: (source, options) => db.pragma(source, options),
    close: () => db.close(),
    get inTransaction() {
      return db.inTransaction;
    },
  };
}

function recordingQueryable(target: PgQueryable, log: StatementLog): PgQueryable {
  return {
    query: (text, values) => {
      log.note(text, values);
      return target.query(text, values);
    },
  };
}

/** A `pg` pool whose statements (on the pool and on checked-out clients) are noted in `log`. */
export function recordingPool(pool: PgPool, log: StatementLog): PgPool {
  return {
    ...recordingQueryable(pool, log),
    connect: async (): Promise<PgPoolClient> => {
      const client = await pool.connect();
      return { ...recordingQueryable(client, log), release: (error) => client.release(error) };
    },
    end: () => pool.end(),
  };
}

// Transaction control, locks and settings have no plan worth reading.
const PLANLESS = /^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET|LOCK|SHOW)\b/i;

/** Whether `sql` is a statement with a query plan. */
export function hasPlan(sql: string): boolean {
  return !PLANLESS.test(sql);
}

/** SQLite's plan lines that walk a table or a whole index (`SCAN`, not `SEARCH`). */
export function sqliteScans(plan: readonly string[]): string[] {
  return plan.filter((line) => /\bSCAN countersign_/.test(line));
}

/** PostgreSQL's plan lines that read a whole table. */
export function postgresScans(plan: readonly string[]): string[] {
  return plan.filter((line) => /Seq Scan on countersign_/.test(line));
}
