import { parseStoredJson } from '../canonical/stored-json.js';
import type { ProposalRecord } from '../store/records.js';
import { inTransaction, type StepTransaction } from './audit-step.js';
import { type CorruptAuditChain, refusingCorruptChain } from './corrupt-audit-chain.js';
import { approvalRight } from './decision-right.js';
import { routeOf } from './routing.js';
import type { EngineContext } from './engine-context.js';
import { policyOf } from './proposal.js';

/** What {@link withdrawLapsedApprovals} did. */
export type WithdrawResult = { readonly kind: 'checked'; readonly withdrawn: number } | CorruptAuditChain;

/**
 * Re-checks every approval given to a tenant's pending proposals against the approver directory
 * and withdraws those whose approver may no longer decide (audited `approval_withdrawn` by `by`),
 * so a page shows "0 of 2" as soon as an approver is disabled or demoted, not only at the next
 * approval. Without an approver directory, nothing is checked.
 */
export async function withdrawLapsedApprovals(
  ctx: EngineContext,
  input: { readonly tenant: string; readonly by: string },
): Promise<WithdrawResult> {
  if (!ctx.approverDirectory) return { kind: 'checked', withdrawn: 0 };
  return refusingCorruptChain(
    ctx,
    () =>
      inTransaction(ctx, async (t): Promise<WithdrawResult> => {
        const byProposal = new Map<string, string[]>();
        for (const a of await t.tx.listPendingApprovals(input.tenant)) {
          const list = byProposal.get(a.proposalId) ?? [];
          list.push(a.approver);
          byProposal.set(a.proposalId, list);
        }
        let withdrawn = 0;
        for (const [id, approvers] of byProposal) {
          const record = await t.tx.getProposal(input.tenant, id);
          if (record?.status !== 'pending') continue;
          withdrawn += (await withdrawLapsed(ctx, t, record, { earlier: approvers, by: input.by })).length;
        }
        return { kind: 'checked', withdrawn };
      }),
    (refused) => refused,
  );
}

/**
 * Re-checks `earlier` approvers of a quorum against the directory (never the one approving now,
 * who was just authenticated): an approval whose approver was disabled, lost the role or left the
 * tenant is removed and audited `approval_withdrawn` by `by`, naming who and why. Returns the
 * withdrawn ids.
 */
export async function withdrawLapsed(
  ctx: EngineContext,
  t: StepTransaction,
  record: ProposalRecord,
  { earlier, by }: { readonly earlier: readonly string[]; readonly by: string },
): Promise<readonly string[]> {
  if (!ctx.approverDirectory || earlier.length === 0) return [];
  const directory = await ctx.approverDirectory.current(t.tx.local, record.tenant, earlier);
  const facts = {
    tenant: record.tenant,
    operation: record.operation,
    scope: parseStoredJson(record.scopeJson),
    requestedBy: record.requestedBy,
    editedBy: record.editedBy,
    policy: policyOf(record),
    route: await routeOf(t.tx, record.tenant, record.id),
  };
  const withdrawn: string[] = [];
  for (const id of earlier) {
    const actor = directory.get(id);
    const right = actor ? approvalRight(ctx, actor, facts) : undefined;
    if (right?.kind === 'allowed') continue;
    await t.tx.deleteApproval(record.tenant, record.id, id);
    await t.record({
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      step: 'approval_withdrawn',
      actor: by,
      reason: right ? right.reason : 'approver_inactive',
      digests: { proposed: record.digest, approved: record.digest },
      detail: {
        approver: id,
        why: right ? right.message : 'the approver is disabled or no longer an operator of this tenant',
      },
    });
    withdrawn.push(id);
  }
  return withdrawn;
}
