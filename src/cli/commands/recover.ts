import { join } from 'node:path';
import { demoOperations, demoWorld } from '../../demo/demo-world.js';
import { createEngine } from '../../engine/create-engine.js';
import type { RecoverySummary } from '../../engine/recover.js';
import type { AnyOperation } from '../../operation/define-operation.js';
import { loadServeConfig } from '../../server/serve-config.js';
import type { Store } from '../../store/store.js';
import { type CliArgs, type Command, stringOption, UsageProblem } from '../command.js';
import {
  cliStoreLocation,
  demoFilesDir,
  openCliStore,
  STORE_OPTIONS,
  sealKeyFromEnv,
  storeOptionsHelp,
} from '../store-option.js';

/** Sweeps in one run at most: a bound, so a store that keeps failing cannot keep the command running. */
const MAX_SWEEPS = 1_000;

function positiveInteger(args: CliArgs, name: string, fallback: number): number {
  const text = stringOption(args, name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new UsageProblem(`--${name} must be a whole number ≥ 1, got "${text}"`);
  return value;
}

async function openTarget(args: CliArgs, configStore: Store | undefined): Promise<Store> {
  if (cliStoreLocation(args)) return openCliStore(args);
  if (configStore) return configStore;
  throw new UsageProblem('--db FILE or --store LOCATION is required');
}

/** Operation kinds of expired attempts this command could not handle: recovery must know every one. */
async function unknownOperations(
  store: Store,
  operations: ReadonlyMap<string, AnyOperation>,
  limit: number,
): Promise<string[]> {
  const unknown = new Set<string>();
  await store.transaction(async (tx) => {
    for (const attempt of await tx.listExpiredLeases(Date.now(), limit)) {
      const record = await tx.getProposal(attempt.tenant, attempt.proposalId);
      if (record && !operations.has(record.operation)) unknown.add(record.operation);
    }
  });
  return [...unknown].sort();
}

/**
 * `countersign recover`: one recovery sweep (repeated while a sweep fills its limit) over attempts
 * whose lease ended, as `engine.sweeps.recover()` does it, and prints what it did.
 */
export const recoverCommand: Command = {
  path: ['recover'],
  summary: 'take over attempts whose lease ended (crashed or stalled workers) and print what was done',
  help: `Usage: countersign recover (--db FILE | --store LOCATION) [--config FILE] [--max-attempts N] [--limit N] [--json]

Takes over executing attempts whose lease has ended, as engine.recover() does: an attempt that
can have had no effect (a local one, whose effect commits with its outcome, or an external one
whose command was never recorded) is re-run as a new attempt, revalidated first; an external
attempt whose command may have reached the provider becomes needs_reconciliation (close it with
the operation's reconcile); an attempt that failed recovery --max-attempts times (default 3) is
parked as terminal_failure for an operator. The old attempt is fenced: its worker, if it wakes,
cannot commit. Safe to run repeatedly and from several machines at once.

${storeOptionsHelp(21, 'an existing SQLite file')}
  --config FILE      an ES module exporting { operations, store? }, as for \`countersign serve\`;
                     without it, the example operations of \`countersign serve --demo\`, with
                     their provider journal where serve --demo keeps it (beside the SQLite
                     file or pglite: directory, else the working directory)
  --limit N          attempts examined per sweep (default 100); sweeps repeat while one fills it
  --json             print the summary as JSON

With COUNTERSIGN_SEAL_KEY set (use the server's key), the audit events it appends are sealed.
Prints: recovered: examined=N rerun=N resent=N to_reconciliation=N parked=N skipped=N held=N chained=N
(held: attempts left as they were because their tenant's audit chain holds an event the engine
did not write, corrupt_audit_chain: countersign audit verify names it, and an operator repairs
it; chained: audit events a crash left queued between a commit and their chaining, now chained)
Exit codes: 0 done, 1 something was parked or held for an operator, 2 bad input (including
expired attempts of an operation the configuration does not define: recovery would misjudge them).`,
  options: {
    ...STORE_OPTIONS,
    config: { type: 'string' },
    'max-attempts': { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args, io) {
    const maxAttempts = positiveInteger(args, 'max-attempts', 3);
    const limit = positiveInteger(args, 'limit', 100);
    const configFile = stringOption(args, 'config');
    const config = configFile ? await loadServeConfig(configFile) : undefined;
    const store = await openTarget(args, config?.store);
    try {
      const operations =
        config?.operations ??
        // The demo provider's journal where `serve --demo` keeps it for this store (beside a SQLite
        // file or a pglite: directory, else the working directory), so a re-run sees its payments.
        demoOperations(
          demoWorld({
            journal: join(demoFilesDir(cliStoreLocation(args)).dir, 'countersign-demo-provider.jsonl'),
          }),
        );
      const known = new Map(operations.map((o) => [o.kind, o]));
      const unknown = await unknownOperations(store, known, limit);
      if (unknown.length > 0) {
        throw new UsageProblem(
          `expired attempts belong to operations this configuration does not define (${unknown.join(', ')}): pass --config FILE with them`,
        );
      }
      const sealKey = sealKeyFromEnv();
      const engine = await createEngine({ store, operations, ...(sealKey ? { sealKey } : {}) });
      const total = {
        examined: 0,
        rerun: 0,
        resent: 0,
        toReconciliation: 0,
        parked: 0,
        skipped: 0,
        held: 0,
        chained: 0,
      };
      for (let sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        const summary: RecoverySummary = await engine.sweeps.recover({ maxAttempts, limit });
        total.examined += summary.examined;
        total.rerun += summary.rerun;
        total.resent += summary.resent;
        total.toReconciliation += summary.toReconciliation;
        total.parked += summary.parked;
        total.skipped += summary.skipped;
        total.held += summary.held;
        total.chained += summary.chained;
        if (summary.examined < limit) break;
      }
      io.stdout(
        args.values['json'] === true
          ? `${JSON.stringify(total)}\n`
          : `recovered: examined=${total.examined} rerun=${total.rerun} resent=${total.resent} to_reconciliation=${total.toReconciliation} parked=${total.parked} skipped=${total.skipped} held=${total.held} chained=${total.chained}\n`,
      );
      return total.parked > 0 || total.held > 0 ? 1 : 0;
    } finally {
      await store.close();
    }
  },
};
