import { readFile } from 'node:fs/promises';
import { parseJson } from '../../canonical/parse-json.js';
import { verifyAudit } from '../../ledger/verify-audit.js';
import type { ChainHead } from '../../audit/event.js';
import { type Command, UsageProblem, stringOption } from '../command.js';
import { openCliStore, sealKeyFromEnv, STORE_OPTIONS, storeOptionsHelp } from '../store-option.js';

async function readCheckpoints(path: string): Promise<(ChainHead & { tenant: string })[]> {
  const value = parseJson(await readFile(path, 'utf8')) as unknown;
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry, i) => {
    const e = entry as Record<string, unknown>;
    if (
      typeof e['tenant'] !== 'string' ||
      typeof e['seq'] !== 'number' ||
      typeof e['chainHash'] !== 'string'
    ) {
      throw new UsageProblem(`--checkpoint ${path}: entry ${i} needs tenant, seq and chainHash`);
    }
    return { tenant: e['tenant'], seq: e['seq'], chainHash: e['chainHash'] };
  });
}

/** `countersign audit verify`: checks every tenant's hash chain (and seals, and checkpoints). */
export const auditVerifyCommand: Command = {
  path: ['audit', 'verify'],
  summary: 'verify the audit hash chains; name the first bad event',
  help: `Usage: countersign audit verify (--db FILE | --store LOCATION) [--tenant T] [--checkpoint FILE]

Recomputes every audit event's leaf hash and chain link, in order, per tenant, and checks the
stored chain head. With COUNTERSIGN_SEAL_KEY set, checks every event's keyed seal too (a forgery
that recomputed the plain hashes fails here). --checkpoint FILE is JSON printed earlier by
\`countersign audit checkpoint\`: a chain truncated or rewritten behind it is detected.
Exit codes: 0 intact, 1 broken (the first bad event is named), 2 bad input.

${storeOptionsHelp(21, 'an existing SQLite file')}`,
  options: { ...STORE_OPTIONS, tenant: { type: 'string' }, checkpoint: { type: 'string' } },
  async run(args, io) {
    const store = await openCliStore(args);
    try {
      const tenant = stringOption(args, 'tenant');
      const checkpointFile = stringOption(args, 'checkpoint');
      const checkpoints = checkpointFile ? await readCheckpoints(checkpointFile) : [];
      const sealKey = sealKeyFromEnv();
      const tenants = tenant ? [tenant] : undefined;
      let events = 0;
      let queued = 0;
      let count = 0;
      for (const t of tenants ?? (await store.read((tx) => tx.auditTenants()))) {
        const checkpoint = checkpoints.find((c) => c.tenant === t);
        const result = await verifyAudit(store, {
          tenant: t,
          ...(sealKey ? { sealKey } : {}),
          ...(checkpoint ? { checkpoint } : {}),
        });
        if (result.kind === 'broken') {
          io.stdout(
            `broken tenant=${result.tenant} event=#${result.seq}${result.eventId ? ` (${result.eventId})` : ''} problem=${result.problem}: ${result.message}\n`,
          );
          return 1;
        }
        events += result.events;
        queued += result.queued ?? 0;
        count++;
      }
      for (const c of checkpoints) {
        if (!tenants?.includes(c.tenant) && tenants) continue;
        const head = await store.read((tx) => tx.auditHead(c.tenant));
        if (!head) {
          io.stdout(
            `broken tenant=${c.tenant} event=#${c.seq} problem=behind_checkpoint: the tenant has no audit events at all\n`,
          );
          return 1;
        }
      }
      io.stdout(
        `intact: ${count} tenant${count === 1 ? '' : 's'}, ${events} events${sealKey ? ', seals checked' : ''}${checkpoints.length ? `, ${checkpoints.length} checkpoint(s) held` : ''}${queued ? `, ${queued} queued to be chained (countersign recover chains them)` : ''}\n`,
      );
      return 0;
    } finally {
      await store.close();
    }
  },
};
