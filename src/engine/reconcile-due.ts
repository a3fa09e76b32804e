import type { Actor } from '../operation/actor.js';
import type { AttemptRecord } from '../store/records.js';
import type { EngineContext } from './engine-context.js';
import { reconcile } from './reconcile.js';

/**
 * When the automatic reconciliation asks the provider about an attempt left `needs_reconciliation`:
 * `firstMs` after it was left, then each time after as long again as it has waited (10s, 20s, 40s…),
 * never more than `maxMs` between tries.
 */
export interface ReconcileBackoff {
  readonly firstMs: number;
  readonly maxMs: number;
}

/** The default backoff: the first try 10 seconds after, then doubling up to 10 minutes between tries. */
export const DEFAULT_RECONCILE_BACKOFF: ReconcileBackoff = Object.freeze({ firstMs: 10_000, maxMs: 600_000 });

/** What one automatic reconciliation pass did. */
export interface ReconcileDueSummary {
  /** Attempts whose next try was due. */
  readonly examined: number;
  /** Closed with the provider's authoritative answer (`succeeded` or `terminal_failure`). */
  readonly reconciled: number;
  /** The provider does not know yet: tried again at the next step of the backoff. */
  readonly stillPending: number;
  /**
   * Could not be reconciled here (no `reconcile` step, an operation this engine has not registered,
   * a tenant's blocked audit chain): logged, tried again at the next step of the backoff.
   */
  readonly refused: number;
  /** Another server (or pass) took this try first. */
  readonly skipped: number;
}

/** The actor the automatic reconciliation is audited as, in the proposal's tenant. */
export function reconciliationActor(tenant: string): Actor {
  return { id: 'system:reconciliation', tenant, kind: 'system', roles: [] };
}

/** When an attempt left `needs_reconciliation` at `leftAt` is first reconciled. */
export function firstReconcileAt(ctx: EngineContext, leftAt: number): number {
  return leftAt + ctx.reconcileBackoff.firstMs;
}

/** The wait before the next try of an attempt left at `leftAt`, tried `now`. */
function nextDelay(ctx: EngineContext, attempt: AttemptRecord, now: number): number {
  const waited = now - (attempt.finishedAt ?? now);
  return Math.min(ctx.reconcileBackoff.maxMs, Math.max(ctx.reconcileBackoff.firstMs, waited));
}

/**
 * Runs the operation's `reconcile` for every `needs_reconciliation` proposal whose next try is due,
 * audited as `system:reconciliation`: what `countersign serve`'s sweep calls. Each try is taken
 * first by a compare-and-set that moves the attempt's next try along the backoff, so servers
 * sweeping at once ask the provider once, and a provider that does not know yet is asked again
 * later, not at every sweep. An operator can still reconcile by hand at any time (`engine.proposals.reconcile`).
 */
export async function reconcileDue(
  ctx: EngineContext,
  options: { readonly limit?: number } = {},
): Promise<ReconcileDueSummary> {
  const now = ctx.clock.now();
  const due = await ctx.store.read((tx) => tx.listReconciliationDue(now, options.limit ?? 100));
  let reconciled = 0;
  let stillPending = 0;
  let refused = 0;
  let skipped = 0;
  for (const attempt of due) {
    const taken = await ctx.store.transaction((tx) =>
      tx.updateAttempt(
        attempt.tenant,
        attempt.id,
        'needs_reconciliation',
        { leaseUntil: now + nextDelay(ctx, attempt, now) },
        { leaseBefore: now },
      ),
    );
    if (!taken) {
      skipped++;
      continue;
    }
    let result: Awaited<ReturnType<typeof reconcile>>;
    try {
      result = await reconcile(ctx, {
        tenant: attempt.tenant,
        proposalId: attempt.proposalId,
        actor: reconciliationActor(attempt.tenant),
      });
    } catch (error) {
      // The operation's reconcile threw (the provider is down): the backoff's next step tries again.
      ctx.logger.warn(
        { proposalId: attempt.proposalId, attemptId: attempt.id, err: error },
        'automatic reconciliation failed; tried again later',
      );
      refused++;
      continue;
    }
    if (result.kind === 'reconciled') reconciled++;
    else if (result.kind === 'still_pending') stillPending++;
    else if (result.reason === 'replayed') skipped++;
    else {
      refused++;
      ctx.logger.warn(
        { proposalId: attempt.proposalId, attemptId: attempt.id, reason: result.reason },
        `automatic reconciliation refused: ${result.message}`,
      );
    }
  }
  return { examined: due.length, reconciled, stillPending, refused, skipped };
}
