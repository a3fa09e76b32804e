import { writeFile } from 'node:fs/promises';
import { demoOperations, demoWorld } from '../../demo/demo-world.js';
import { exportIncident } from '../../ledger/incident-export.js';
import type { AnyOperation } from '../../operation/define-operation.js';
import { loadServeConfig } from '../../server/serve-config.js';
import type { Store } from '../../store/store.js';
import { type CliArgs, type Command, stringOption, UsageProblem } from '../command.js';
import {
  cliStoreLocation,
  openCliStore,
  STORE_OPTIONS,
  sealKeyFromEnv,
  storeOptionsHelp,
} from '../store-option.js';

interface Target {
  readonly store: Store;
  readonly operations: readonly AnyOperation[] | undefined;
  /** Stores this command opened or was handed, closed at the end. */
  readonly close: () => Promise<void>;
}

// Redaction rules live on the operations: take them from the server's config module, or from the
// demo operations for a `serve --demo` database. Without either, values are exported unredacted.
async function openTarget(args: CliArgs): Promise<Target> {
  const configFile = stringOption(args, 'config');
  const demo = args.values['demo'] === true;
  if (configFile && demo) throw new UsageProblem('pass --config FILE or --demo, not both');
  const location = cliStoreLocation(args);
  const config = configFile ? await loadServeConfig(configFile) : undefined;
  const operations = demo ? demoOperations(demoWorld()) : config?.operations;
  const configStore = config?.store;
  let store: Store;
  try {
    if (location) store = await openCliStore(args);
    else if (configStore) store = configStore;
    else throw new UsageProblem('--db FILE or --store LOCATION is required');
  } catch (error) {
    await configStore?.close();
    throw error;
  }
  return {
    store,
    operations,
    close: async () => {
      await store.close();
      if (configStore && configStore !== store) await configStore.close();
    },
  };
}

/** `countersign audit export PROPOSAL_ID`: the incident handoff bundle of one proposal, as JSON. */
export const auditExportCommand: Command = {
  path: ['audit', 'export'],
  summary: 'write the incident handoff bundle of one proposal (scopes, digests, ids, effect yes/no/unknown)',
  help: `Usage: countersign audit export PROPOSAL_ID (--db FILE | --store LOCATION) [--out FILE] [--tenant T] [--config FILE | --demo]

Writes one JSON bundle for an incident handoff: the proposed, viewed (preview), approved and
requested scopes with their versions and digests (full and short), the executor's reason, every
attempt and command id, the proposal's audit events with short hashes, the verification of the
tenant's audit chain (seals too, with COUNTERSIGN_SEAL_KEY set), and a plain statement of whether
an external effect occurred: yes, no, or unknown (reconciliation pending).

Values are redacted by the operations' field rules when they are known: --config FILE loads them
from the server's config module (whose store is used when neither --db nor --store is given),
--demo uses the demo operations. Otherwise the stored values are written unredacted, and the
bundle says so. The seal key is never written.

${storeOptionsHelp(21, 'an existing SQLite file')}

Writes to stdout unless --out FILE is given. Exit codes: 0 written, 1 no such proposal, 2 bad input.`,
  options: {
    ...STORE_OPTIONS,
    store: { type: 'string' },
    out: { type: 'string' },
    tenant: { type: 'string' },
    config: { type: 'string' },
    demo: { type: 'boolean' },
  },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const { store, operations, close } = await openTarget(args);
    try {
      const proposalId = args.positionals[0]!;
      const tenant = stringOption(args, 'tenant');
      const sealKey = sealKeyFromEnv();
      const result = await exportIncident(store, {
        proposalId,
        ...(tenant ? { tenant } : {}),
        ...(sealKey ? { sealKey } : {}),
        ...(operations ? { operations } : {}),
      });
      if (result.kind === 'not_found') {
        io.stderr(`countersign audit export: ${result.message}\n`);
        return 1;
      }
      const json = `${JSON.stringify(result.bundle, null, 2)}\n`;
      const out = stringOption(args, 'out');
      if (!out) {
        io.stdout(json);
        return 0;
      }
      await writeFile(out, json, 'utf8');
      io.stdout(`wrote ${out}: ${proposalId} externalEffect=${result.bundle.externalEffect}\n`);
      return 0;
    } finally {
      await close();
    }
  },
};
