import { displayHash } from '../../canonical/digest.js';
import { parseStoredJson } from '../../canonical/stored-json.js';
import { PROPOSAL_STATUSES, type ProposalStatus } from '../../store/records.js';
import { type Command, requiredOption, stringOption, UsageProblem } from '../command.js';
import { openCliStore, STORE_OPTIONS, storeOptionsHelp } from '../store-option.js';

const STATUSES = PROPOSAL_STATUSES;

/** `countersign proposals list`: a tenant's proposals, newest first. */
export const proposalsListCommand: Command = {
  path: ['proposals', 'list'],
  summary: "list a tenant's proposals (newest first)",
  help: `Usage: countersign proposals list (--db FILE | --store LOCATION) --tenant T [--status S] [--limit N]

One line per proposal: id, status, operation, short hash, created at, run id, title.
Statuses: ${STATUSES.join(', ')}.

${storeOptionsHelp(21, 'an existing SQLite file')}`,
  options: {
    ...STORE_OPTIONS,
    tenant: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(args, io) {
    const tenant = requiredOption(args, 'tenant');
    const status = stringOption(args, 'status');
    if (status !== undefined && !STATUSES.includes(status as ProposalStatus))
      throw new UsageProblem(`--status ${status}: expected one of ${STATUSES.join(', ')}`);
    const limit = Number(stringOption(args, 'limit') ?? '50');
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new UsageProblem('--limit must be a whole number from 1 to 1000');
    const store = await openCliStore(args);
    try {
      const rows = await store.read((tx) =>
        tx.listProposals(tenant, { limit, ...(status ? { status: status as ProposalStatus } : {}) }),
      );
      if (rows.length === 0)
        io.stdout(`no proposals for tenant ${tenant}${status ? ` with status ${status}` : ''}\n`);
      for (const r of rows) {
        const preview = parseStoredJson(r.previewJson) as Record<string, unknown> | null;
        const title = preview && typeof preview['title'] === 'string' ? preview['title'] : '';
        io.stdout(
          `${r.id}  ${r.status.padEnd(20)}  ${r.operation.padEnd(30)}  ${displayHash(r.digest)}  ${new Date(r.createdAt).toISOString()}  ${r.runId}  ${JSON.stringify(title)}\n`,
        );
      }
      return 0;
    } finally {
      await store.close();
    }
  },
};
