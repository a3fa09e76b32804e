import type { ChainHead } from '../../audit/event.js';
import { verifyAudit } from '../../ledger/verify-audit.js';
import { type Command, stringOption } from '../command.js';
import { openCliStore, STORE_OPTIONS, sealKeyFromEnv, storeOptionsHelp } from '../store-option.js';

/** One tenant's chain head as `countersign audit checkpoint` prints it (and `audit verify --checkpoint` reads it). */
export interface AuditCheckpoint extends ChainHead {
  readonly tenant: string;
  /** When the head was read, ISO 8601. Informational: verification ignores it. */
  readonly takenAt: string;
}

/**
 * `countersign audit checkpoint`: prints every tenant's audit chain head (or one tenant's) as JSON,
 * after verifying the chain up to it. Keep the output somewhere the database's writers cannot
 * reach (a ticket, another system, a signed commit): `countersign audit verify --checkpoint FILE`
 * then detects a chain truncated or rewritten behind it, which no check inside the database can.
 */
export const auditCheckpointCommand: Command = {
  path: ['audit', 'checkpoint'],
  summary: 'print the audit chain head(s) as JSON, to keep outside the database',
  help: `Usage: countersign audit checkpoint (--db FILE | --store LOCATION) [--tenant T]

Verifies each tenant's audit chain (and, with COUNTERSIGN_SEAL_KEY set, its seals) and prints
the heads as a JSON array: [{ "tenant", "seq", "chainHash", "takenAt" }]. Store the output
outside the database; later, \`countersign audit verify --db FILE --checkpoint SAVED.json\` fails
if the chain no longer contains those heads (a truncated tail, a rewritten history).
Exit codes: 0 printed, 1 a chain is broken (nothing is printed to stdout) or the tenant has no
events, 2 bad input.

${storeOptionsHelp(21, 'an existing SQLite file')}`,
  options: { ...STORE_OPTIONS, tenant: { type: 'string' } },
  async run(args, io) {
    const store = await openCliStore(args);
    try {
      const only = stringOption(args, 'tenant');
      const sealKey = sealKeyFromEnv();
      const tenants = only ? [only] : await store.read((tx) => tx.auditTenants());
      const checkpoints: AuditCheckpoint[] = [];
      for (const tenant of tenants) {
        // The head is read before the chain is verified: appends only ever follow it, so the
        // verified chain contains it, and the checkpoint option proves exactly that.
        const head = await store.read((tx) => tx.auditHead(tenant));
        if (!head) {
          io.stderr(`countersign audit checkpoint: tenant ${tenant} has no audit events\n`);
          return 1;
        }
        const takenAt = new Date().toISOString();
        const result = await verifyAudit(store, {
          tenant,
          checkpoint: { tenant, ...head },
          ...(sealKey ? { sealKey } : {}),
        });
        if (result.kind === 'broken') {
          io.stderr(
            `countersign audit checkpoint: not checkpointing a broken chain: tenant=${result.tenant} event=#${result.seq}${result.eventId ? ` (${result.eventId})` : ''} problem=${result.problem}: ${result.message}\n`,
          );
          return 1;
        }
        checkpoints.push({ tenant, seq: head.seq, chainHash: head.chainHash, takenAt });
      }
      io.stdout(`${JSON.stringify(checkpoints, null, 2)}\n`);
      return 0;
    } finally {
      await store.close();
    }
  },
};
