import { inTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';

/** Which pending proposals a schema change retires. */
export interface ExpireVersionInput {
  readonly operation: string;
  /** Pending proposals with a scope version below this are expired. */
  readonly below: number;
  readonly actor: string;
}

/**
 * Expires every pending proposal of an operation whose scope version is below `below`, with the
 * reason `unsupported_scope_version`, audited: an old approval is never reinterpreted under a new
 * schema; a new review is required. Returns how many it expired, per tenant. A tenant whose audit
 * chain holds an event the engine did not write (`corrupt_audit_chain`, logged) keeps its pending
 * proposals; the sweep goes on with the next tenant.
 */
export async function expireVersion(
  ctx: EngineContext,
  input: ExpireVersionInput,
): Promise<{ expired: number; tenants: Record<string, number> }> {
  // A Map: tenant names are data, and `constructor` or `__proto__` must count like any other.
  const tenants = new Map<string, number>();
  let expired = 0;
  for (const tenant of await ctx.store.read((tx) => tx.auditTenants())) {
    for (;;) {
      const batch = await expireBatch(ctx, input, tenant);
      if (batch === 0) break;
      tenants.set(tenant, (tenants.get(tenant) ?? 0) + batch);
      expired += batch;
    }
  }
  return { expired, tenants: Object.fromEntries(tenants) };
}

/** Expires up to 500 of a tenant's retired pending proposals in one transaction: how many (0 when held). */
async function expireBatch(ctx: EngineContext, input: ExpireVersionInput, tenant: string): Promise<number> {
  return refusingCorruptChain(
    ctx,
    () =>
      inTransaction(ctx, async (t) => {
        const pending = await t.tx.listProposals(tenant, {
          status: 'pending',
          operation: input.operation,
          limit: 500,
        });
        let count = 0;
        for (const record of pending.filter((p) => p.scopeVersion < input.below)) {
          const now = ctx.clock.now();
          if (
            !(await t.tx.updateProposal(
              tenant,
              record.id,
              { status: 'pending' },
              {
                status: 'expired',
                decisionNote: `scope version ${record.scopeVersion} retired`,
                updatedAt: now,
              },
            ))
          )
            continue;
          await t.record({
            tenant,
            proposalId: record.id,
            operation: record.operation,
            proposedAt: record.createdAt,
            runId: record.runId,
            step: 'expired',
            actor: input.actor,
            reason: 'unsupported_scope_version',
            digests: { proposed: record.digest },
            detail: { scopeVersion: record.scopeVersion, below: input.below },
          });
          count++;
        }
        return count;
      }),
    () => 0,
    { action: 'expire_version', operation: input.operation },
  );
}
