import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { isPgliteTarget, isPostgresTarget, openStore, pgliteDataDir } from '../store/open-store.js';
import { MIN_SEAL_KEY_BYTES } from '../canonical/seal.js';
import type { Store } from '../store/store.js';
import { type CliArgs, stringOption, UsageProblem } from './command.js';

/** The `--db FILE` / `--store LOCATION` options every store-reading command shares. */
export const STORE_OPTIONS = {
  db: { type: 'string' },
  store: { type: 'string' },
} as const;

/** The forms `--store` takes, as usage problems name them. */
const STORE_FORMS = 'postgres://… (or postgresql://…), pglite:DIR, pglite:memory: or a SQLite file path';

// A scheme (`mysql://`) or a `name:` prefix (`sqlite:`) of two letters or more. `C:\data` (a drive
// letter) and `:memory:` stay paths; a file whose name has such a prefix is written `./name:…`.
const PREFIX = /^([a-z][a-z0-9+.-]+):/i;

/** Where `--db` / `--store` put a command's store. */
export interface CliStoreLocation {
  /** What {@link openStore} opens: a PostgreSQL URL, a `pglite:` location or a SQLite path. */
  readonly target: string;
  readonly kind: 'postgres' | 'pglite' | 'sqlite';
  /** The flag that named it, for messages. */
  readonly flag: '--db' | '--store';
}

/**
 * Reads `--db FILE` / `--store LOCATION` the one way every command does, or undefined when neither
 * is given. `--store` takes a `postgres://` / `postgresql://` URL, `pglite:DIR`, `pglite:memory:`
 * or a SQLite path; `--db` a SQLite path only. Anything else (both flags, an unknown scheme such
 * as `mysql://` or `sqlite:`, an empty value) is a {@link UsageProblem} naming the flag and the
 * forms it takes; a URL is never echoed, since it may hold a password.
 *
 * @example
 * const location = cliStoreLocation(args);
 * const store = await openStore(location?.target ?? 'countersign.db');
 */
export function cliStoreLocation(args: CliArgs): CliStoreLocation | undefined {
  const db = stringOption(args, 'db');
  const store = stringOption(args, 'store');
  if (db !== undefined && store !== undefined)
    throw new UsageProblem('pass --db FILE or --store LOCATION, not both');
  if (store !== undefined) {
    if (isPostgresTarget(store)) return { target: store, kind: 'postgres', flag: '--store' };
    if (isPgliteTarget(store)) return { target: store, kind: 'pglite', flag: '--store' };
    if (store.trim() === '') throw new UsageProblem(`--store needs a value: ${STORE_FORMS}`);
    const prefix = PREFIX.exec(store)?.[1];
    if (prefix !== undefined)
      throw new UsageProblem(`--store: "${prefix}:" is not a store scheme; give ${STORE_FORMS}`);
    return { target: store, kind: 'sqlite', flag: '--store' };
  }
  if (db !== undefined) {
    if (db.trim() === '') throw new UsageProblem('--db needs a SQLite file path');
    if (PREFIX.test(db))
      throw new UsageProblem(
        '--db takes a SQLite file path; give postgres:// URLs and pglite: locations to --store',
      );
    return { target: db, kind: 'sqlite', flag: '--db' };
  }
  return undefined;
}

/**
 * Refuses a store named twice: by `--db` / `--store` (`location`) and by the `store` a
 * `--config FILE` module exports. Neither is documented to win, and silently serving the config's
 * store while the operator believes the flag's would put approvals in a database nobody looks at.
 * The config's store was built when the module loaded, so it is closed before the
 * {@link UsageProblem} is thrown.
 *
 * @example
 * const config = configFile ? await loadServeConfig(configFile) : undefined;
 * await refuseTwoStores(location, config?.store);
 */
export async function refuseTwoStores(
  location: CliStoreLocation | undefined,
  configStore: Store | undefined,
): Promise<void> {
  if (location === undefined || configStore === undefined) return;
  await configStore.close().catch(() => {});
  throw new UsageProblem(`${location.flag} and the config file's store both name a store: give one`);
}

/** Where `--demo` keeps its files: its credentials and the demo provider's journal. */
export type DemoFilesDir =
  | { readonly kind: 'beside_store'; readonly dir: string }
  /** The store has no directory of its own (`store` names it for messages): the working directory. */
  | { readonly kind: 'working_directory'; readonly dir: string; readonly store: string };

/**
 * The directory `--demo` writes its credentials and provider journal to: beside the SQLite file
 * (default `./countersign.db`), beside the data directory of `pglite:DIR`, and the working
 * directory for a store with no directory of its own (a `postgres://` server, `pglite:memory:`),
 * which the command then says. Relative locations resolve against the working directory.
 *
 * @example
 * const files = demoFilesDir(cliStoreLocation(args));
 * const journal = join(files.dir, 'countersign-demo-provider.jsonl');
 */
export function demoFilesDir(location: CliStoreLocation | undefined): DemoFilesDir {
  if (location === undefined || location.kind === 'sqlite')
    return { kind: 'beside_store', dir: dirname(resolve(location?.target ?? 'countersign.db')) };
  if (location.kind === 'pglite') {
    const dataDir = pgliteDataDir(location.target);
    if (dataDir !== 'memory://') return { kind: 'beside_store', dir: dirname(resolve(dataDir)) };
    return { kind: 'working_directory', dir: resolve('.'), store: 'pglite:memory:' };
  }
  return { kind: 'working_directory', dir: resolve('.'), store: 'a PostgreSQL server store' };
}

const STORE_HELP =
  'postgres://USER@HOST/DB (or postgresql://…) for a PostgreSQL server several ' +
  'processes may share (?schema=NAME keeps the tables in a schema of their own; a password is ' +
  'never printed); pglite:DIR for PostgreSQL embedded in this process, its data in DIR (one ' +
  'process at a time; needs @electric-sql/pglite); pglite:memory: for the same in memory, lost ' +
  'on exit; or a SQLite FILE';

/**
 * The help lines of `--db FILE` (described as `db` says; `false` for a command without it) and
 * `--store LOCATION`, the same in every command: descriptions start at `column` (the command's
 * own option column) and wrap before column 100.
 *
 * @example
 * help: `Usage: countersign token list (--db FILE | --store LOCATION)\n\n${storeOptionsHelp(21, 'an existing SQLite file')}`
 */
export function storeOptionsHelp(column: number, db: string | false): string {
  const text = db === false ? STORE_HELP : `instead of --db: ${STORE_HELP}, as --db FILE`;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && column + line.length + 1 + word.length > 99) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  const option = (name: string) => `  ${name.padEnd(column - 2)}`;
  return [
    ...(db === false ? [] : [`${option('--db FILE')}${db}`]),
    ...lines.map((l, i) => (i === 0 ? option('--store LOCATION') : ' '.repeat(column)) + l),
  ].join('\n');
}

/**
 * Opens the store named by `--db FILE` (an existing SQLite file) or `--store LOCATION` (see
 * {@link cliStoreLocation}), and migrates it.
 */
export async function openCliStore(args: CliArgs, options: { mustExist?: boolean } = {}): Promise<Store> {
  const location = cliStoreLocation(args);
  if (!location) throw new UsageProblem('--db FILE or --store LOCATION is required');
  if (location.kind === 'sqlite' && options.mustExist !== false && !existsSync(location.target)) {
    throw new UsageProblem(`${location.flag} ${location.target}: no such file`);
  }
  const store = await openStore(location.target);
  await store.migrate();
  return store;
}

/**
 * The server's seal key from COUNTERSIGN_SEAL_KEY, when set. Never printed.
 *
 * @throws {UsageProblem} when it is shorter than 32 bytes, naming the variable and its length.
 */
export function sealKeyFromEnv(): string | undefined {
  const key = process.env['COUNTERSIGN_SEAL_KEY'];
  if (!key) return undefined;
  const bytes = Buffer.byteLength(key);
  if (bytes < MIN_SEAL_KEY_BYTES)
    throw new UsageProblem(
      `COUNTERSIGN_SEAL_KEY: must be at least ${MIN_SEAL_KEY_BYTES} bytes, got ${bytes} (for example: openssl rand -hex 32)`,
    );
  return key;
}
