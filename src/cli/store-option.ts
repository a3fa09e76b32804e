import { existsSync } from 'node:fs';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { Store } from '../store/store.js';
import { type CliArgs, UsageProblem, stringOption } from './command.js';

/** The `--db FILE` option every store-reading command shares. */
export const STORE_OPTIONS = {
  db: { type: 'string' },
} as const;

/** Opens the store named by `--db` (an existing SQLite file) and migrates it. */
export async function openCliStore(args: CliArgs, options: { mustExist?: boolean } = {}): Promise<Store> {
  const db = stringOption(args, 'db');
  if (!db) throw new UsageProblem('--db FILE is required');
  if (options.mustExist !== false && !existsSync(db)) throw new UsageProblem(`--db ${db}: no such file`);
  const store = new SqliteStore({ path: db });
  await store.migrate();
  return store;
}

/** The server's seal key from COUNTERSIGN_SEAL_KEY, when set. Never printed. */
export function sealKeyFromEnv(): string | undefined {
  const key = process.env['COUNTERSIGN_SEAL_KEY'];
  return key && key.length > 0 ? key : undefined;
}
