import { shortHash } from '../../canonical/digest.js';
import type { AuditEvent } from '../../audit/event.js';
import type { Command } from '../command.js';
import { openCliStore, STORE_OPTIONS } from '../store-option.js';

/** One audit line: time, step, actor, short hash, reason. */
export function formatAuditLine(e: AuditEvent): string {
  const hash = e.digests.approved ?? e.digests.proposed ?? e.digests.seen;
  const approvedScope =
    typeof e.detail['approvedScope'] === 'string'
      ? ` (approved scope ${shortHash(e.detail['approvedScope'])})`
      : '';
  const requested = e.digests.requested
    ? `  requested=${shortHash(e.digests.requested)}${approvedScope}`
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
      hash ? shortHash(hash) : '-'.repeat(12),
      e.reason ?? '-',
      ...extras,
    ].join('  ') + requested
  );
}

/** `countersign audit show PROPOSAL_ID`: the proposal's audit events, one line each. */
export const auditShowCommand: Command = {
  path: ['audit', 'show'],
  summary: "print one proposal's audit events: time, step, actor, short hash, reason",
  help: `Usage: countersign audit show PROPOSAL_ID --db FILE

One line per audit event of the proposal, in order: time, step, actor, short hash, reason (and
attempt, command, diff or supersession where present). Exit codes: 0 found, 1 no such proposal.`,
  options: { ...STORE_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const store = await openCliStore(args);
    try {
      const proposalId = args.positionals[0]!;
      // An operator with the database file is looking across tenants: find the proposal's tenant.
      for (const tenant of await store.read((tx) => tx.auditTenants())) {
        const events = await store.read((tx) => tx.listAudit(tenant, { proposalId, limit: 10_000 }));
        if (events.length === 0) continue;
        io.stdout(`proposal ${proposalId} (tenant ${tenant}, run ${events[0]!.runId})\n`);
        for (const e of events) io.stdout(`${formatAuditLine(e)}\n`);
        return 0;
      }
      io.stderr(`countersign audit show: no audit events for ${proposalId}\n`);
      return 1;
    } finally {
      await store.close();
    }
  },
};
