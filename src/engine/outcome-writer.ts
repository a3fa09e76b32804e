import { canonicalize } from '../canonical/canonicalize.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import type { Outcome } from '../operation/outcome.js';
import type { ProposalRecord } from '../store/records.js';
import { inTransaction, type StepTransaction } from './audit-step.js';
import type { EngineContext } from './engine-context.js';
import { FencedAttemptError } from './errors.js';
import type { ExecutionContract } from './execution-contract.js';
import type { FaultPoint } from './faults.js';
import { newId } from './ids.js';
import { firstReconcileAt } from './reconcile-due.js';

// Writing an attempt's outcome: once, fenced by attempt number, with the audit steps that end it.

/** One claimed attempt of a proposal, as its steps and outcome are recorded. */
export interface AttemptRun {
  readonly ctx: EngineContext;
  readonly record: ProposalRecord;
  readonly contract: ExecutionContract;
}

/** An outcome to record, the step recorded just before it, and the fault points it passes (tests). */
export interface Finishing {
  readonly outcome: Outcome;
  readonly extra?: ExtraStep | undefined;
  readonly fault?: ((point: FaultPoint) => Promise<void>) | undefined;
}

/** Another worker took this attempt over (fencing by attempt number): this one must not commit. */
export class Fenced extends Error {}

export type ExtraStep = {
  readonly step: 'revalidated' | 'denied';
  readonly reason: string;
  readonly digests?: { readonly requested?: string };
  readonly detail: Readonly<Record<string, unknown>>;
};

export function revisionStep(reason: string): ExtraStep {
  return { step: 'revalidated', reason: 'revision_required', detail: { message: reason } };
}

/** A step of this attempt: its base facts and `fields` (assigned, not spread: see executeContext). */
export function stepOf<F extends object>(record: ProposalRecord, contract: ExecutionContract, fields: F) {
  return Object.assign(stepBase(record, contract), fields);
}

function stepBase(record: ProposalRecord, contract: ExecutionContract) {
  return {
    tenant: record.tenant,
    proposalId: record.id,
    operation: record.operation,
    proposedAt: record.createdAt,
    runId: record.runId,
    actor: 'system:executor',
    attemptId: contract.attemptId,
  };
}

export function failure(
  reason:
    | 'corrupt_approval_record'
    | 'scope_mismatch'
    | 'invalid_requested_scope'
    | 'unsupported_scope_version',
  message: string,
): Outcome {
  return { kind: 'terminal_failure', correlationId: newId('cor'), reason, message };
}

// The error itself goes to the server log under a correlation id; only the id and a safe sentence
// reach the model, the API and the console.
export function crashed(ctx: EngineContext, record: ProposalRecord, error: unknown, what: string): Outcome {
  const correlationId = newId('cor');
  ctx.logger.error({ correlationId, proposalId: record.id, runId: record.runId, err: error }, what);
  return { kind: 'terminal_failure', correlationId, message: `${what}; see correlation id ${correlationId}` };
}

/** Records the outcome in its own transaction, fenced by attempt number. */
export async function finish(run: AttemptRun, finishing: Finishing): Promise<Outcome> {
  const { ctx, record } = run;
  try {
    return await inTransaction(ctx, async (t) => {
      await writeOutcome(t, run, { ...finishing, at: ctx.clock.now() });
      return finishing.outcome;
    });
  } catch (error) {
    if (error instanceof Fenced) return storedOutcomeOf(ctx, record);
    throw error;
  }
}

export async function writeOutcome(
  t: StepTransaction,
  run: AttemptRun,
  finishing: Finishing & { readonly at: number },
): Promise<void> {
  const { ctx, record, contract } = run;
  const { outcome, extra, fault, at: now } = finishing;
  const applied = await t.tx.updateProposal(
    record.tenant,
    record.id,
    { status: 'executing', attempt: contract.attemptNumber },
    { status: outcome.kind, outcomeJson: canonicalize(outcome), updatedAt: now },
  );
  if (!applied) throw new Fenced();
  await t.tx.updateAttempt(
    record.tenant,
    contract.attemptId,
    'executing',
    outcome.kind === 'needs_reconciliation'
      ? // Its lease becomes the time of its first automatic reconciliation (see reconcileDue).
        { status: 'needs_reconciliation', finishedAt: now, leaseUntil: firstReconcileAt(ctx, now) }
      : { status: 'completed', finishedAt: now },
  );
  if (fault) await fault('between_outcome_and_audit');
  if (extra)
    await t.record(
      stepOf(record, contract, {
        step: extra.step,
        reason: extra.reason,
        detail: extra.detail,
        digests: { approved: record.digest, ...extra.digests },
      }),
    );
  await t.record(
    stepOf(record, contract, {
      step: 'outcome',
      reason:
        outcome.kind === 'terminal_failure'
          ? (outcome.reason ?? null)
          : outcome.kind === 'revision_required'
            ? 'revision_required'
            : null,
      digests: { approved: record.digest },
      detail: outcomeDetail(outcome),
    }),
  );
}

function outcomeDetail(outcome: Outcome): Record<string, unknown> {
  switch (outcome.kind) {
    case 'succeeded':
      return { outcome: 'succeeded' };
    case 'needs_reconciliation':
      return { outcome: 'needs_reconciliation' };
    case 'revision_required':
      return { outcome: 'revision_required', message: outcome.reason };
    case 'terminal_failure':
      return { outcome: 'terminal_failure', correlationId: outcome.correlationId };
  }
}

export function storedOutcome(record: ProposalRecord): Outcome {
  if (!record.outcomeJson) throw new FencedAttemptError(record.id);
  return parseStoredJson(record.outcomeJson) as Outcome;
}

export async function storedOutcomeOf(ctx: EngineContext, record: ProposalRecord): Promise<Outcome> {
  const current = await ctx.store.read((tx) => tx.getProposal(record.tenant, record.id));
  return storedOutcome(current ?? record);
}
