import { existsSync } from 'node:fs';
import { isPgliteTarget, isPostgresTarget, openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { type CliArgs, stringOption, UsageProblem } from './command.js';

/** The `--db FILE` / `--store URL` options every store-reading command shares. */
export const STORE_OPTIONS = {
  db: { type: 'string' },
  store: { type: 'string' },
} as const;

/**
 * Opens the store named by `--db FILE` (an existing SQLite file) or `--store URL|FILE` (a
 * `postgres://` URL, a `pglite:` location or a SQLite path), and migrates it.
 */
export async function openCliStore(args: CliArgs, options: { mustExist?: boolean } = {}): Promise<Store> {
  const db = stringOption(args, 'db');
  const url = stringOption(args, 'store');
  if (db && url) throw new UsageProblem('give --db FILE or --store URL, not both');
  const target = url ?? db;
  if (!target) throw new UsageProblem('--db FILE (or --store postgres://…) is required');
  const sqliteFile = !isPostgresTarget(target) && !isPgliteTarget(target);
  if (sqliteFile && options.mustExist !== false && !existsSync(target)) {
    throw new UsageProblem(`${url ? '--store' : '--db'} ${target}: no such file`);
  }
  const store = await openStore(target);
  await store.migrate();
  return store;
}

/** The server's seal key from COUNTERSIGN_SEAL_KEY, when set. Never printed. */
export function sealKeyFromEnv(): string | undefined {
  const key = process.env['COUNTERSIGN_SEAL_KEY'];
  return key && key.length > 0 ? key : undefined;
}
