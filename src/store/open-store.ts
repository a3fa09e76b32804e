import { ConfigurationError } from '../canonical/errors.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** PostgreSQL: connections in the pool. Default 10. */
  readonly poolSize?: number;
}

import { StoreUnavailableError } from './store-errors.js';

export { StoreUnavailableError };

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** True for a `postgres://` or `postgresql://` URL. */
export function isPostgresTarget(target: string): boolean {
  return POSTGRES_URL.test(target);
}

/** The target as it may be printed or logged: a URL's password replaced by `***`. */
export function describeStoreTarget(target: string): string {
  if (!isPostgresTarget(target)) return target;
  try {
    const url = new URL(target);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return target.replace(/\/\/[^@/]*@/, '//***@');
  }
}

/**
 * Opens the store a command line or a config file names: a `postgres://` / `postgresql://` URL
 * opens a {@link PostgresStore} (its own `pg` pool; `?schema=NAME` puts the tables in a schema of
 * their own, created on migration), anything else is a SQLite file path (created if missing;
 * `:memory:` for a throwaway store). The store is not migrated: `createEngine` does that, or
 * `countersign migrate`. Several servers may open the same PostgreSQL URL: claims stay atomic
 * across them.
 *
 * @example
 * const store = await openStore(process.env.COUNTERSIGN_STORE ?? 'countersign.db');
 * const engine = await createEngine({ store, operations });
 */
export async function openStore(target: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (target.trim() === '')
    throw new ConfigurationError('store: a postgres:// URL or a SQLite file path is required');
  if (isPostgresTarget(target)) {
    let url: URL;
    try {
      url = new URL(target);
    } catch (error) {
      throw new ConfigurationError(`store: ${describeStoreTarget(target)} is not a valid URL`, {
        cause: error,
      });
    }
    const schema = url.searchParams.get('schema') ?? undefined;
    url.searchParams.delete('schema');
    return new PostgresStore({
      connectionString: schema === undefined ? target : url.toString(),
      ...(schema === undefined ? {} : { schema }),
      ...(options.poolSize === undefined ? {} : { max: options.poolSize }),
    });
  }
  try {
    return new SqliteStore({ path: target });
  } catch (error) {
    throw new StoreUnavailableError(
      `cannot open the SQLite store ${target}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}
