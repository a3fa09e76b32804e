import type { AuditEvent } from '../../audit/event.js';
import { displayHash } from '../../canonical/digest.js';
import { proposalTimeline } from '../../engine/audit-timeline.js';
import { auditEvents } from '../../engine/queries.js';
import type { Command } from '../command.js';
import { openCliStore, STORE_OPTIONS, storeOptionsHelp } from '../store-option.js';

/** One audit line: time, step, actor, short hash (`invalid:…` for a malformed stored digest), reason. */
export function formatAuditLine(e: AuditEvent): string {
  const hash = e.digests.approved ?? e.digests.proposed ?? e.digests.seen;
  const approvedScope =
    typeof e.detail['approvedScope'] === 'string'
      ? ` (approved scope ${displayHash(e.detail['approvedScope'])})`
      : '';
  const requested = e.digests.requested
    ? `  requested=${displayHash(e.digests.requested)}${approvedScope}`
    : '';
  const extras = [
    e.attemptId ? `attempt=${e.attemptId}` : '',
    e.commandId ? `command=${e.commandId}` : '',
    typeof e.detail['supersededBy'] === 'string' ? `superseded-by=${e.detail['supersededBy']}` : '',
    typeof e.detail['supersedes'] === 'string' ? `supersedes=${e.detail['supersedes']}` : '',
    Array.isArray(e.detail['diff']) ? `diff=${(e.detail['diff'] as string[]).join('; ')}` : '',
  ].filter(Boolean);
  return (
    [
      new Date(e.at).toISOString(),
      e.step.padEnd(11),
      e.actor,
      hash !== undefined ? displayHash(hash) : '-'.repeat(12),
      e.reason ?? '-',
      ...extras,
    ].join('  ') + requested
  );
}

/** `countersign audit show PROPOSAL_ID`: the proposal's audit events, one line each. */
export const auditShowCommand: Command = {
  path: ['audit', 'show'],
  summary: "print one proposal's audit events: time, step, actor, short hash, reason",
  help: `Usage: countersign audit show PROPOSAL_ID (--db FILE | --store LOCATION) [--collapse]

One line per audit event of the proposal, in order: time, step, actor, short hash, reason (and
attempt, command, diff or supersession where present). Every event is printed, read page by page.
--collapse prints repeated refusals and replays by one actor for one reason, between two other
events, as one line with their count, first and last time: the decisions stay in view however
many refusals were recorded. Exit codes: 0 found, 1 no such proposal.

${storeOptionsHelp(21, 'an existing SQLite file')}`,
  options: { ...STORE_OPTIONS, collapse: { type: 'boolean' } },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const store = await openCliStore(args);
    try {
      const proposalId = args.positionals[0]!;
      // An operator with the database file is looking across tenants: find the proposal's tenant.
      for (const tenant of await store.read((tx) => tx.auditTenants())) {
        const [first] = await store.read((tx) => tx.listAudit(tenant, { proposalId, limit: 1 }));
        if (!first) continue;
        io.stdout(`proposal ${proposalId} (tenant ${tenant}, run ${first.runId})\n`);
        if (args.values['collapse'] === true) {
          for (const entry of (await proposalTimeline({ store }, tenant, proposalId)).entries)
            io.stdout(
              entry.kind === 'event'
                ? `${formatAuditLine(entry.line)}\n`
                : `${formatAuditLine(entry.first)}  ×${entry.count} (last ${new Date(entry.last.at).toISOString()})\n`,
            );
          return 0;
        }
        for await (const e of auditEvents({ store }, tenant, { proposalId }))
          io.stdout(`${formatAuditLine(e)}\n`);
        return 0;
      }
      io.stderr(`countersign audit show: no audit events for ${proposalId}\n`);
      return 1;
    } finally {
      await store.close();
    }
  },
};
