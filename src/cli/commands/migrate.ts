import type { MigrationReport } from '../../store/postgres/postgres-store.js';
import { describeStoreTarget, openStore, StoreUnavailableError } from '../../store/open-store.js';
import { StoreFaultError } from '../../store/store-fault.js';
import type { Store } from '../../store/store.js';
import { type Command, stringOption, UsageProblem } from '../command.js';
import { cliStoreLocation, storeOptionsHelp } from '../store-option.js';

type Migration = MigrationReport['applied'][number];

// Errors from a driver or the network carry a string `code` (ECONNREFUSED, 28P01, SQLITE_CANTOPEN…):
// those are the store being unavailable, reported as such; anything else is a bug and propagates.
function isIoError(error: unknown): boolean {
  return (
    error instanceof StoreFaultError ||
    (typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string')
  );
}

async function recorded(store: Store): Promise<Migration[]> {
  try {
    const rows = await store.transaction((tx) =>
      tx.local.all('SELECT version, name FROM countersign_migrations ORDER BY version'),
    );
    return rows.map((r) => ({ version: Number(r['version']), name: String(r['name']) }));
  } catch {
    return []; // no migrations table yet
  }
}

/** Migrates any store and says what it did; exact for stores that report it, a before/after diff otherwise. */
async function migrateAndReport(store: Store): Promise<MigrationReport> {
  const reporting = store as Store & { migrateWithReport?: () => Promise<MigrationReport> };
  if (typeof reporting.migrateWithReport === 'function') return reporting.migrateWithReport();
  const before = await recorded(store);
  await store.migrate();
  const known = new Set(before.map((m) => m.version));
  const after = await recorded(store);
  return { applied: after.filter((m) => !known.has(m.version)), alreadyApplied: before };
}

/** `countersign migrate --store LOCATION`: applies pending schema migrations and lists them. */
export const migrateCommand: Command = {
  path: ['migrate'],
  summary: 'apply the pending schema migrations of a store (PostgreSQL, PGlite or SQLite)',
  help: `Usage: countersign migrate --store LOCATION

Applies the store's pending schema migrations in one transaction and prints one line per
migration, applied now or already applied, then the schema version. Before it starts, it says on
stderr how many it will apply (a migration that copies a table takes a while on a large store). Safe on every deploy and
from several instances at once (PostgreSQL takes an advisory lock; SQLite a write lock).

${storeOptionsHelp(21, false)}
                     (a schema, a directory or a file is created if missing)

Exit codes: 0 migrated (or already up to date), 2 bad input or the store cannot be reached.`,
  options: { store: { type: 'string' } },
  async run(args, io) {
    const location = stringOption(args, 'store') ? cliStoreLocation(args) : undefined;
    if (!location) throw new UsageProblem('--store is required');
    const target = location.target;
    const shown = describeStoreTarget(target);
    const store = await openStore(target);
    let report: MigrationReport;
    try {
      // Said before the one transaction starts: a migration that copies a table (24 on SQLite's
      // audit events) runs for seconds per million rows, and prints nothing until it commits.
      const pending = (await store.health?.())?.pendingMigrations ?? 0;
      if (pending > 0)
        io.stderr(`applying ${pending} pending migration${pending === 1 ? '' : 's'} to ${shown}…\n`);
      report = await migrateAndReport(store);
    } catch (error) {
      if (!isIoError(error)) throw error;
      throw new StoreUnavailableError(
        `cannot migrate ${shown}: ${error instanceof Error ? error.message : String(error)}`,
        {
          cause: error,
        },
      );
    } finally {
      await store.close();
    }
    const lines = [`store ${store.capabilities.name} ${shown}`];
    const all = [
      ...report.alreadyApplied.map((m) => ({ ...m, state: 'already applied' })),
      ...report.applied.map((m) => ({ ...m, state: 'applied now' })),
    ].sort((a, b) => a.version - b.version);
    for (const m of all) lines.push(`migration ${m.version} ${m.name}: ${m.state}`);
    const version = all.at(-1)?.version ?? 0;
    lines.push(
      report.applied.length === 0
        ? `schema version ${version}: up to date`
        : `schema version ${version}: applied ${report.applied.length} migration${report.applied.length === 1 ? '' : 's'}`,
    );
    io.stdout(`${lines.join('\n')}\n`);
    return 0;
  },
};
