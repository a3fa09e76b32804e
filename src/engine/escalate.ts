import { CorruptAuditChainError } from '../store/store-errors.js';
import { inTransaction } from './audit-step.js';
import { corruptAuditChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';

/**
 * The escalation sweep: every pending, unexpired proposal whose route's escalation time has come
 * is escalated once (compare-and-set), audited `escalated` by `system:escalation` with the group
 * and channel it now goes to. From then on the escalation group's members may decide it too and
 * see it in "Needs you", and the notification of the `escalated` event reaches them. Returns how
 * many it escalated. Safe in several processes at once; a tenant whose audit chain is corrupt is
 * logged and left for the next sweep.
 */
export async function escalateDue(
  ctx: EngineContext,
  options: { readonly limit?: number } = {},
): Promise<number> {
  const due = await ctx.store.read((tx) => tx.listEscalationDue(ctx.clock.now(), options.limit ?? 200));
  let escalated = 0;
  for (const { tenant, id } of due) {
    try {
      const done = await inTransaction(ctx, async (t) => {
        const record = await t.tx.getProposal(tenant, id);
        if (record?.status !== 'pending' || t.now >= record.expiresAt) return false;
        const [route] = await t.tx.listProposalRoutes(tenant, [id]);
        if (!route || route.escalateAt === null || route.escalateAt > t.now || route.escalationGroup === null)
          return false;
        if (!(await t.tx.markEscalated(tenant, id, t.now))) return false;
        await t.record({
          tenant,
          proposalId: id,
          operation: record.operation,
          proposedAt: record.createdAt,
          runId: record.runId,
          step: 'escalated',
          actor: 'system:escalation',
          digests: { proposed: record.digest },
          detail: {
            route: route.routeName,
            routeId: route.routeId,
            from: route.group,
            to: route.escalationGroup,
            channel: route.escalationChannel,
          },
        });
        return true;
      });
      if (done) escalated++;
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      corruptAuditChain(ctx, error, { action: 'escalate', proposalId: id });
    }
  }
  return escalated;
}

/**
 * The reminder sweep: every pending proposal that expires within `beforeExpiryMs` and was not
 * reminded yet gets its one reminder (recorded, so never twice, whatever the number of sweeps or
 * processes), audited `reminded` by `system:reminder`; the notification of that event reminds the
 * approvers who may still decide it (its route's group when routed). Returns how many it reminded.
 */
export async function remindDue(
  ctx: EngineContext,
  options: { readonly beforeExpiryMs: number; readonly limit?: number },
): Promise<number> {
  const now = ctx.clock.now();
  const due = await ctx.store.read((tx) =>
    tx.listReminderDue(now, now + options.beforeExpiryMs, options.limit ?? 200),
  );
  let reminded = 0;
  for (const { tenant, id } of due) {
    try {
      const done = await inTransaction(ctx, async (t) => {
        const record = await t.tx.getProposal(tenant, id);
        if (record?.status !== 'pending' || t.now >= record.expiresAt) return false;
        if (!(await t.tx.insertReminder(tenant, id, t.now))) return false;
        await t.record({
          tenant,
          proposalId: id,
          operation: record.operation,
          proposedAt: record.createdAt,
          runId: record.runId,
          step: 'reminded',
          actor: 'system:reminder',
          digests: { proposed: record.digest },
          detail: { expiresAt: new Date(record.expiresAt).toISOString() },
        });
        return true;
      });
      if (done) reminded++;
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      corruptAuditChain(ctx, error, { action: 'remind', proposalId: id });
    }
  }
  return reminded;
}
