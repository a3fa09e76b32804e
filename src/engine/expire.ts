import { expireRecord } from './approve.js';
import { inTransaction } from './audit-step.js';
import type { EngineContext } from './engine-context.js';

/**
 * Marks every pending proposal whose expiry has passed (by the engine's clock) as `expired`, and
 * audits each. Returns how many it expired. Safe to run from several processes at once.
 */
export async function expireDue(ctx: EngineContext, batchSize = 500): Promise<number> {
  let total = 0;
  for (;;) {
    const now = ctx.clock.now();
    const expired = await inTransaction(ctx, async (t) => {
      let count = 0;
      for (const { tenant, id } of await t.tx.listExpired(now, batchSize)) {
        const record = await t.tx.getProposal(tenant, id);
        if (record && (await expireRecord(t, record, now, 'system:expiry'))) count++;
      }
      return count;
    });
    total += expired;
    if (expired < batchSize) return total;
  }
}
