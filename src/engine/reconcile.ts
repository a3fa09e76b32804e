import { canonicalize } from '../canonical/canonicalize.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { freeze } from '../canonical/freeze.js';
import type { Actor } from '../operation/actor.js';
import type { Reconciliation } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { DenialReason } from '../operation/reasons.js';
import { mayDecide } from './decision-right.js';
import type { AttemptRecord, ProposalRecord } from '../store/records.js';
import { inTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';
import { newId } from './ids.js';
import { commandKeyOf } from './resend.js';
import type { Operations, OutcomeOf } from './operation-types.js';

/** Close a `needs_reconciliation` proposal by asking the provider about its attempt. */
export interface ReconcileInput {
  readonly tenant: string;
  readonly proposalId: string;
  /** An operator of the tenant, or a `system` actor of the tenant for a scheduled sweep. */
  readonly actor: Actor;
}

/** The authoritative result recorded, still unknown at the provider, or why it cannot be reconciled. */
export type ReconcileResult<Ops extends Operations = Operations> =
  | { readonly kind: 'reconciled'; readonly outcome: OutcomeOf<Ops> }
  | { readonly kind: 'still_pending' }
  | { readonly kind: 'not_reconcilable'; readonly reason: DenialReason; readonly message: string };

/**
 * Looks the last attempt up at the provider by its idempotency key (the operation's `reconcile`) and
 * records the authoritative result: `succeeded` when the provider has it, `terminal_failure` when it
 * has no record (nothing happened). Never calls the provider's effect again. A tenant whose audit chain
 * cannot take the events records nothing: `corrupt_audit_chain`, still `needs_reconciliation`.
 */
export async function reconcile(ctx: EngineContext, input: ReconcileInput): Promise<ReconcileResult> {
  const { actor } = input;
  const allowed =
    actor.tenant === input.tenant && (actor.kind === 'system' || mayDecide(ctx, actor, input.tenant));
  const record =
    actor.tenant === input.tenant
      ? await ctx.store.read((tx) => tx.getProposal(input.tenant, input.proposalId))
      : undefined;
  if (!record) return { kind: 'not_reconcilable', reason: 'not_found', message: 'no such proposal' };
  if (!allowed) return { kind: 'not_reconcilable', reason: 'forbidden', message: 'not allowed to reconcile' };
  if (record.status !== 'needs_reconciliation') {
    return {
      kind: 'not_reconcilable',
      reason: 'replayed',
      message: `the proposal is ${record.status}, not waiting for reconciliation`,
    };
  }
  const operation = ctx.operations.get(record.operation);
  const attempts = await ctx.store.read((tx) => tx.listAttempts(record.tenant, record.id));
  const attempt = attempts.find((a) => a.number === record.currentAttempt);
  if (!operation) {
    return {
      kind: 'not_reconcilable',
      reason: 'unknown_operation',
      message: `operation ${record.operation} is not registered`,
    };
  }
  if (!operation.reconcile || !operation.arguments) {
    return {
      kind: 'not_reconcilable',
      reason: 'reconcile_unsupported',
      message: `${record.operation} defines no reconcile step`,
    };
  }
  if (!attempt) {
    return {
      kind: 'not_reconcilable',
      reason: 'corrupt_approval_record',
      message: `attempt ${record.currentAttempt} of the proposal is not stored`,
    };
  }
  // A resent command is known to the provider by the key it was first sent under.
  const idempotencyKey = commandKeyOf(attempts, attempt);
  const answer: Reconciliation<unknown> = await operation.reconcile({
    proposalId: record.id,
    attemptId: attempt.id,
    attemptNumber: attempt.number,
    idempotencyKey,
    arguments: freeze<unknown>(operation.arguments.parse(parseStoredJson(record.argumentsJson))),
  });
  if (answer.kind === 'pending') return { kind: 'still_pending' };
  const outcome: Outcome =
    answer.kind === 'succeeded'
      ? { kind: 'succeeded', result: parseStoredJson(canonicalize(answer.result ?? null)) }
      : { kind: 'terminal_failure', correlationId: newId('cor'), message: answer.message };
  // The provider's answer stays where it is until an operator repairs a chain that cannot record it.
  return refusingCorruptChain(
    ctx,
    () =>
      recordReconciled(ctx, actor, { record, attempt, idempotencyKey }, { provider: answer.kind, outcome }),
    (refused): ReconcileResult => ({
      kind: 'not_reconcilable',
      reason: refused.reason,
      message: refused.message,
    }),
  );
}

/** Records the provider's answer as the proposal's outcome, fenced by the attempt, audited. */
function recordReconciled(
  ctx: EngineContext,
  actor: Actor,
  looked: {
    readonly record: ProposalRecord;
    readonly attempt: AttemptRecord;
    readonly idempotencyKey: string;
  },
  answer: { readonly provider: 'succeeded' | 'not_found'; readonly outcome: Outcome },
): Promise<ReconcileResult> {
  const { record, attempt, idempotencyKey } = looked;
  const { provider, outcome } = answer;
  return inTransaction(ctx, async (t): Promise<ReconcileResult> => {
    const { now } = t;
    const applied = await t.tx.updateProposal(
      record.tenant,
      record.id,
      { status: 'needs_reconciliation', attempt: attempt.number },
      {
        status: outcome.kind,
        outcomeJson: canonicalize(outcome),
        updatedAt: now,
      },
    );
    if (!applied)
      return { kind: 'not_reconcilable', reason: 'replayed', message: 'another reconciliation came first' };
    await t.tx.updateAttempt(record.tenant, attempt.id, 'needs_reconciliation', {
      status: 'completed',
      finishedAt: now,
    });
    const base = {
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      actor: actor.id,
      attemptId: attempt.id,
    };
    await t.record({
      ...base,
      step: 'reconciled',
      commandId: attempt.commandId,
      digests: { approved: record.digest },
      detail: { provider, idempotencyKey },
    });
    await t.record({
      ...base,
      step: 'outcome',
      digests: { approved: record.digest },
      detail: { outcome: outcome.kind },
    });
    return { kind: 'reconciled', outcome };
  });
}
