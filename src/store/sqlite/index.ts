export { SQLITE_MIGRATIONS } from './migrations.js';
export { type SqliteDatabase, SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { SQLITE_PAGE_SIZE } from './sqlite-driver.js';

import { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';

/** Opens the embedded SQLite store (`sqliteStore({ path: 'app.db' })`). Call `migrate()` or let `createEngine` do it. */
export function sqliteStore(options: SqliteStoreOptions = {}): SqliteStore {
  return new SqliteStore(options);
}
