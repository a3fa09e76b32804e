import type { Actor } from '../operation/actor.js';
import type { DenialReason } from '../operation/reasons.js';
import { mayDecide } from './decision-right.js';
import { routeOf, routeRefusal } from './routing.js';
import { policyOf } from './proposal.js';
import { inTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';

/** An operator declines a pending proposal, optionally saying why (shown to the next model turn). */
export interface DeclineInput {
  readonly tenant: string;
  readonly proposalId: string;
  readonly actor: Actor;
  readonly reason?: string;
}

/** `declined`, or why it could not be. */
export type DeclineResult =
  | { readonly kind: 'declined' }
  | {
      readonly kind: 'not_declinable';
      readonly reason: DenialReason;
      readonly message: string;
      /** With `rate_limited` (too many refused decisions): when the actor's budget frees. */
      readonly retryAfterMs?: number;
    };

/**
 * Declines a pending proposal: a compare-and-set from pending to declined, audited. A tenant whose
 * audit chain cannot take the event declines nothing: `corrupt_audit_chain`.
 */
export function decline(ctx: EngineContext, input: DeclineInput): Promise<DeclineResult> {
  return refusingCorruptChain(
    ctx,
    () => declineInTransaction(ctx, input),
    (refused): DeclineResult => ({
      kind: 'not_declinable',
      reason: refused.reason,
      message: refused.message,
    }),
  );
}

function declineInTransaction(ctx: EngineContext, input: DeclineInput): Promise<DeclineResult> {
  return inTransaction(ctx, async (t) => {
    const record =
      input.actor.tenant === input.tenant
        ? await t.tx.getProposal(input.tenant, input.proposalId)
        : undefined;
    if (!record) return { kind: 'not_declinable', reason: 'not_found', message: 'no such proposal' };
    const base = {
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      actor: input.actor.id,
    };
    const refuse = async (reason: DenialReason, message: string): Promise<DeclineResult> => {
      const budget = t.budget('refusal', record.tenant, input.actor.id);
      if (budget)
        return {
          kind: 'not_declinable',
          reason: budget.reason,
          message: budget.message,
          retryAfterMs: budget.retryAfterMs,
        };
      await t.record({
        ...base,
        step: 'denied',
        reason,
        digests: { proposed: record.digest },
        detail: { action: 'decline', message },
      });
      return { kind: 'not_declinable', reason, message };
    };
    if (!mayDecide(ctx, input.actor, record.tenant))
      return refuse('forbidden', 'not allowed to decline proposals');
    // Any approver eligible under the frozen policy may decline; one decline ends a quorum.
    const roles = policyOf(record).roles;
    if (roles.length > 0 && !input.actor.roles.some((r) => roles.includes(r)))
      return refuse('forbidden', `declining this proposal needs one of the roles ${roles.join(', ')}`);
    const routed = routeRefusal(await routeOf(t.tx, record.tenant, record.id), input.actor.id);
    if (routed !== undefined) return refuse('forbidden', routed);
    if (record.status !== 'pending') {
      const reason: DenialReason =
        record.status === 'declined' || record.status === 'superseded' || record.status === 'expired'
          ? record.status
          : 'replayed';
      return refuse(reason, `the proposal is ${record.status}`);
    }
    const { now } = t;
    if (now >= record.expiresAt) return refuse('expired', 'the proposal already expired');
    const note = input.reason?.slice(0, 500) ?? null;
    const applied = await t.tx.updateProposal(
      record.tenant,
      record.id,
      { status: 'pending' },
      {
        status: 'declined',
        decidedBy: input.actor.id,
        decidedAt: now,
        decisionNote: note,
        updatedAt: now,
      },
    );
    if (!applied) return refuse('replayed', 'another decision came first');
    await t.record({
      ...base,
      step: 'declined',
      reason: 'declined',
      digests: { proposed: record.digest },
      detail: note ? { note } : {},
    });
    return { kind: 'declined' };
  });
}
