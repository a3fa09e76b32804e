export type { PgliteDatabase, PgliteResult } from './pglite-pool.js';
export { type MigrationReport, PgliteStore, type PgliteStoreOptions } from './pglite-store.js';
export { StoreClosedError } from '../store-errors.js';

import { PgliteStore, type PgliteStoreOptions } from './pglite-store.js';

/**
 * Opens the PGlite store (`pgliteStore({ dataDir: './data' })`, or `pgliteStore()` in memory).
 * Call `migrate()` or let `createEngine` do it.
 */
export function pgliteStore(options: PgliteStoreOptions = {}): PgliteStore {
  return new PgliteStore(options);
}
