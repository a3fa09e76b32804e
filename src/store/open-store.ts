import { statSync } from 'node:fs';
import { ConfigurationError } from '../canonical/errors.js';
import { PgliteStore } from './pglite/pglite-store.js';
import type { PostgresTimeouts } from './postgres/postgres-driver.js';
import { PostgresStore } from './postgres/postgres-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

/** Options of {@link openStore}. */
export interface OpenStoreOptions {
  /** PostgreSQL: connections in the pool. Default 10. */
  readonly poolSize?: number;
  /** PostgreSQL: connection and statement deadlines (see {@link PostgresTimeouts}). */
  readonly timeouts?: PostgresTimeouts;
}

import { StoreUnavailableError } from './store-errors.js';

export { StoreUnavailableError };

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
const PGLITE = /^pglite:/i;
// `pglite:memory:` is the throwaway database; a scheme (`memory://`, `file://`) is not a location here.
const PGLITE_MEMORY = 'memory:';
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const PGLITE_FORMS = 'write pglite:DIRECTORY (e.g. pglite:./data) or pglite:memory:';

/** True for a `postgres://` or `postgresql://` URL. */
export function isPostgresTarget(target: string): boolean {
  return POSTGRES_URL.test(target);
}

/** True for a `pglite:` location (`pglite:./data`, `pglite:memory:`). */
export function isPgliteTarget(target: string): boolean {
  return PGLITE.test(target);
}

/**
 * The PGlite data directory a `pglite:` location names (`memory://` for `pglite:memory:`), or
 * throws a {@link ConfigurationError} naming the location and what is wrong with it.
 */
export function pgliteDataDir(target: string): string {
  const location = target.replace(PGLITE, '');
  if (location.trim() === '')
    throw new ConfigurationError(`store: ${target} names no database: ${PGLITE_FORMS}`);
  if (location === PGLITE_MEMORY) return 'memory://';
  if (SCHEME.test(location) || location.startsWith('//'))
    throw new ConfigurationError(
      `store: ${target} is not a PGlite location (a URL is not a directory): ${PGLITE_FORMS}`,
    );
  if (location !== location.trim())
    throw new ConfigurationError(`store: ${target} has spaces around its directory: ${PGLITE_FORMS}`);
  let isFile = false;
  try {
    isFile = !statSync(location).isDirectory();
  } catch {
    // Missing: PGlite creates the directory.
  }
  if (isFile) throw new ConfigurationError(`store: ${target} is a file, not a directory: ${PGLITE_FORMS}`);
  return location;
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
 * their own, created on migration); `pglite:DIRECTORY` or `pglite:memory:` opens a
 * {@link PgliteStore} (PostgreSQL in this process; needs `@electric-sql/pglite`); anything else is
 * a SQLite file path (created if missing; `:memory:` for a throwaway store). The store is not migrated: `createEngine` does that, or
 * `countersign migrate`. Several servers may open the same PostgreSQL URL: claims stay atomic
 * across them.
 *
 * @example
 * const store = await openStore(process.env.COUNTERSIGN_STORE ?? 'countersign.db');
 * const engine = await createEngine({ store, operations });
 */
export async function openStore(target: string, options: OpenStoreOptions = {}): Promise<Store> {
  if (target.trim() === '')
    throw new ConfigurationError(
      'store: a postgres:// URL, a pglite: location or a SQLite file path is required',
    );
  if (isPgliteTarget(target)) return new PgliteStore({ dataDir: pgliteDataDir(target) });
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
      ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
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
