import { CorruptAuditChainError } from '../store/store-errors.js';
import type { ProposalRecord } from '../store/records.js';
import { inTransaction, type StepTransaction } from './audit-step.js';
import { corruptAuditChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';

/**
 * Marks every pending proposal whose expiry has passed (by the engine's clock) as `expired`, and
 * audits each. Returns how many it expired. Safe to run from several processes at once. A tenant
 * whose audit chain holds an event the engine did not write (`corrupt_audit_chain`, logged) keeps
 * its proposals pending (an approval checks the expiry itself, and is refused there too); the other
 * tenants' are expired all the same.
 */
export async function expireDue(ctx: EngineContext, batchSize = 500): Promise<number> {
  let total = 0;
  const held = new Set<string>();
  // Due proposals of held tenants the last batch read past: the next one reads past them too.
  let passed = 0;
  for (;;) {
    const now = ctx.clock.now();
    const limit = batchSize + passed;
    let batch: { readonly expired: number; readonly skipped: number; readonly listed: number };
    try {
      batch = await inTransaction(ctx, async (t) => {
        const due = await t.tx.listExpired(now, limit);
        let expired = 0;
        let skipped = 0;
        for (const { tenant, id } of due) {
          if (held.has(tenant)) {
            skipped++;
            continue;
          }
          const record = await t.tx.getProposal(tenant, id);
          if (record && (await expireRecord(t, record, now, 'system:expiry'))) expired++;
        }
        return { expired, skipped, listed: due.length };
      });
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      // The batch rolled back whole: it runs again without that tenant (each tenant once).
      corruptAuditChain(ctx, error, { action: 'expire' });
      held.add(error.tenant);
      continue;
    }
    total += batch.expired;
    if (batch.listed < limit) return total;
    passed = batch.skipped;
  }
}

/** Marks a pending proposal expired (compare-and-set) and audits it. */
export async function expireRecord(
  t: StepTransaction,
  record: ProposalRecord,
  now: number,
  actor: string,
): Promise<boolean> {
  const applied = await t.tx.updateProposal(
    record.tenant,
    record.id,
    { status: 'pending' },
    { status: 'expired', updatedAt: now },
  );
  if (applied) {
    await t.record({
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      step: 'expired',
      actor,
      reason: 'expired',
      digests: { proposed: record.digest },
    });
  }
  return applied;
}
