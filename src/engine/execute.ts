import { canonicalize } from '../canonical/canonicalize.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { type DeepReadonly, freeze } from '../canonical/freeze.js';
import { formatScopeChange } from '../canonical/scope-diff.js';
import { authorizeExecution, type ExecutionDecision } from '../operation/authorize-execution.js';
import type {
  AnyOperation,
  CommandMeta,
  DefiniteFailure,
  ExecuteContext,
  LocalTransaction,
  ProposalFacts,
  Revalidation,
} from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { ProposalRecord } from '../store/records.js';
import { type ExecutionContract, verifiedArgumentsOf } from './approve.js';
import { inTransaction, type StepTransaction } from './audit-step.js';
import type { EngineContext } from './engine-context.js';
import { CorruptAuditChainError, StoreUnavailableError } from '../store/store-errors.js';
import type { AttemptHandle } from './running-attempts.js';
import { corruptAuditChain } from './corrupt-audit-chain.js';
import { FencedAttemptError, OperationContractError } from './errors.js';
import type { FaultHook } from './faults.js';
import { newId } from './ids.js';
import { firstReconcileAt } from './reconcile-due.js';
import { resentCommandOf } from './resend.js';

/** The command guard refused a downstream call: no command id exists for it. */
class CommandRefused extends Error {
  constructor(readonly decision: Extract<ExecutionDecision, { kind: 'denied' }>) {
    super(decision.message);
  }
}

/** Another worker took this attempt over (fencing by attempt number): this one must not commit. */
class Fenced extends Error {}

/** When a lease was renewed, by the engine's clock and by the monotonic one. */
interface LeaseClock {
  readonly at: number;
  readonly monotonic: number;
}

function leaseClock(ctx: EngineContext): LeaseClock {
  return { at: ctx.clock.now(), monotonic: performance.now() };
}

/**
 * Whether a sweep may have taken over an attempt whose lease was renewed at `renewed` (read just
 * before the renewal was written, so the age is never underestimated). A sweep takes an attempt
 * only once its own clock passes the lease, so while half the lease is left no sweep whose clock
 * runs less than half a lease ahead of this one can have. Both clocks must agree: the engine's
 * clock (a test's fake clock, or a wall clock set back during a pause) and the monotonic one
 * (which a paused process cannot fool).
 */
function leaseMayHaveLapsed(ctx: EngineContext, renewed: LeaseClock): boolean {
  const young = ctx.leaseMs / 2;
  return ctx.clock.now() - renewed.at >= young || performance.now() - renewed.monotonic >= young;
}

function isDefiniteFailure(value: unknown): value is DefiniteFailure {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'definite_failure'
  );
}

function factsOf(record: ProposalRecord): ProposalFacts {
  return {
    tenant: record.tenant,
    section: record.section,
    resource: record.resource,
    requestedBy: record.requestedBy,
    runId: record.runId,
    operation: record.operation,
  };
}

/** Execution options the engine threads through; `faults` exists for the fault-injection tests only. */
export interface ExecuteOptions {
  readonly faults?: FaultHook | undefined;
}

/** Whether an external attempt's command may have reached the provider. */
interface Progress {
  sent: boolean;
  /** This engine's registration of the attempt (see `RunningAttempts`): a shutdown may hand it back. */
  readonly attempt: AttemptHandle;
}

/**
 * Executes a claimed contract exactly once: loads the frozen arguments, revalidates against current
 * state, and runs the operation's executor. Local effects commit in the same transaction as their
 * outcome; external effects have their attempt recorded before the call and their outcome after, and
 * a call whose response is lost ends `needs_reconciliation`, never retried. When the tenant's audit
 * chain refuses a record (see {@link unrecorded}), nothing more is executed or recorded.
 */
export async function execute(
  ctx: EngineContext,
  contract: ExecutionContract,
  options: ExecuteOptions = {},
): Promise<Outcome> {
  const fault = async (point: Parameters<FaultHook>[0]) => {
    if (options.faults)
      await options.faults(point, { proposalId: contract.proposalId, attemptNumber: contract.attemptNumber });
  };
  const progress: Progress = { sent: false, attempt: ctx.running.begin(contract) };
  try {
    await fault('after_claim');
    const operation = ctx.operations.get(contract.operation);
    if (!operation?.execute || !operation.arguments) {
      throw new OperationContractError(
        contract.operation,
        `cannot execute ${contract.proposalId}: the operation has no executor here`,
      );
    }
    return operation.effect === 'local'
      ? await executeLocal(ctx, operation, contract, fault, progress.attempt)
      : await executeExternal(ctx, operation, contract, fault, progress);
  } catch (error) {
    if (!(error instanceof CorruptAuditChainError)) throw error;
    return unrecorded(ctx, contract, error, progress);
  } finally {
    progress.attempt.end();
  }
}

/**
 * The answer of an execution whose tenant's audit chain refused a record: it holds an event the
 * engine did not write where the next one goes. The refused transaction was rolled back whole, so
 * the attempt stays `executing` until an operator repairs the chain and recovery takes it over.
 * Before the provider heard of it (or for a local effect, rolled back with it) nothing was executed:
 * a terminal failure naming `corrupt_audit_chain`. After, the provider's answer is not recorded:
 * `needs_reconciliation`, never retried.
 */
function unrecorded(
  ctx: EngineContext,
  contract: ExecutionContract,
  error: CorruptAuditChainError,
  progress: Progress,
): Outcome {
  const refused = corruptAuditChain(ctx, error, {
    proposalId: contract.proposalId,
    attemptId: contract.attemptId,
    sent: progress.sent,
  });
  if (progress.sent) return { kind: 'needs_reconciliation' };
  return {
    kind: 'terminal_failure',
    correlationId: newId('cor'),
    reason: 'corrupt_audit_chain',
    message: refused.message,
  };
}

type Readiness =
  | { readonly kind: 'stored'; readonly outcome: Outcome }
  | { readonly kind: 'corrupt'; readonly outcome: Outcome }
  | { readonly kind: 'ready'; readonly args: DeepReadonly<unknown> };

/** Checks that this attempt still owns the proposal and that the contract is exactly what is stored. */
function readiness(
  record: ProposalRecord | undefined,
  contract: ExecutionContract,
  operation: AnyOperation,
): Readiness {
  if (!record)
    throw new OperationContractError(
      contract.operation,
      `cannot execute ${contract.proposalId}: no such proposal`,
    );
  if (record.status !== 'executing' || record.currentAttempt !== contract.attemptNumber)
    return { kind: 'stored', outcome: storedOutcome(record) };
  // A contract this process claimed after the integrity checks holds exactly the stored text,
  // read, checked through the operation and frozen: the text still being that is the whole check.
  const claimedFrom = verifiedArgumentsOf(contract);
  if (
    claimedFrom !== undefined &&
    record.digest === contract.digest &&
    record.argumentsJson === claimedFrom
  ) {
    return { kind: 'ready', args: contract.arguments };
  }
  if (record.digest !== contract.digest || canonicalize(contract.arguments) !== record.argumentsJson) {
    return {
      kind: 'corrupt',
      outcome: failure('corrupt_approval_record', 'the contract does not match the stored proposal'),
    };
  }
  return {
    kind: 'ready',
    args: freeze<unknown>(operation.arguments!.parse(parseStoredJson(record.argumentsJson))),
  };
}

/** Runs the operation's revalidation; an exception becomes a safe terminal failure. */
async function revalidateArgs(
  ctx: EngineContext,
  operation: AnyOperation,
  record: ProposalRecord,
  args: DeepReadonly<unknown>,
): Promise<Revalidation | { readonly kind: 'crashed'; readonly outcome: Outcome }> {
  if (!operation.revalidate) return { kind: 'valid' };
  try {
    return await operation.revalidate(args, {
      tenant: record.tenant,
      section: record.section,
      resource: record.resource,
      requestedBy: record.requestedBy,
      runId: record.runId,
      operation: record.operation,
      proposalId: record.id,
      valid: () => ({ kind: 'valid' }),
      revisionRequired: (reason: string) => ({ kind: 'revision_required', reason }),
    });
  } catch (error) {
    return { kind: 'crashed', outcome: crashed(ctx, record, error, 'revalidation failed') };
  }
}

function revisionStep(reason: string): ExtraStep {
  return { step: 'revalidated', reason: 'revision_required', detail: { message: reason } };
}

/** A step of this attempt: its base facts and `fields` (assigned, not spread: see executeContext). */
function stepOf<F extends object>(record: ProposalRecord, contract: ExecutionContract, fields: F) {
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

function failure(
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
function crashed(ctx: EngineContext, record: ProposalRecord, error: unknown, what: string): Outcome {
  const correlationId = newId('cor');
  ctx.logger.error({ correlationId, proposalId: record.id, runId: record.runId, err: error }, what);
  return { kind: 'terminal_failure', correlationId, message: `${what}; see correlation id ${correlationId}` };
}

function guard(operation: AnyOperation, record: ProposalRecord, request: unknown): ExecutionDecision {
  const facts = factsOf(record);
  const raw = operation.commandScope
    ? operation.commandScope(request as never, facts)
    : operation.toScope(request, facts);
  return authorizeExecution(
    {
      operation,
      scopeVersion: record.scopeVersion,
      scope: parseStoredJson(record.scopeJson),
      digest: record.scopeDigest,
    },
    raw,
  );
}

function executeContext(
  record: ProposalRecord,
  contract: ExecutionContract,
  transaction: LocalTransaction | undefined,
  command: ExecuteContext['command'],
): ExecuteContext {
  // Member by member: in V8 an object spread followed by more members costs microseconds.
  return {
    tenant: record.tenant,
    section: record.section,
    resource: record.resource,
    requestedBy: record.requestedBy,
    runId: record.runId,
    operation: record.operation,
    proposalId: record.id,
    attemptId: contract.attemptId,
    attemptNumber: contract.attemptNumber,
    idempotencyKey: contract.idempotencyKey,
    transaction,
    command,
    fail: (message: string) => ({ kind: 'definite_failure', message }),
  };
}

// A local effect commits with its outcome, and is revalidated inside the same transaction: no
// other writer can change the facts between the check and the effect.
async function executeLocal(
  ctx: EngineContext,
  operation: AnyOperation,
  contract: ExecutionContract,
  fault: (point: Parameters<FaultHook>[0]) => Promise<void>,
  attempt: AttemptHandle,
): Promise<Outcome> {
  // Handed back by a shutdown before the effect began: another server's sweep re-runs it.
  if (!attempt.finish()) {
    const current = await ctx.store.read((tx) => tx.getProposal(contract.tenant, contract.proposalId));
    if (current?.outcomeJson) return storedOutcome(current);
    throw new FencedAttemptError(contract.proposalId);
  }
  let record: ProposalRecord | undefined;
  try {
    return await inTransaction(ctx, async (t) => {
      record = await t.tx.getProposal(contract.tenant, contract.proposalId);
      const ready = readiness(record, contract, operation);
      if (ready.kind === 'stored') return ready.outcome;
      const current = record!;
      const now = ctx.clock.now();
      if (ready.kind === 'corrupt') {
        await writeOutcome(ctx, now, t, current, contract, ready.outcome, undefined);
        return ready.outcome;
      }
      const revalidation = await revalidateArgs(ctx, operation, current, ready.args);
      if (revalidation.kind !== 'valid') {
        const outcome: Outcome =
          revalidation.kind === 'crashed'
            ? revalidation.outcome
            : { kind: 'revision_required', reason: revalidation.reason };
        await writeOutcome(
          ctx,
          now,
          t,
          current,
          contract,
          outcome,
          revalidation.kind === 'revision_required' ? revisionStep(revalidation.reason) : undefined,
        );
        return outcome;
      }
      if (operation.revalidate)
        await t.record(
          stepOf(current, contract, {
            step: 'revalidated',
            digests: { approved: current.digest },
          }),
        );
      await fault('after_revalidation');
      const command: ExecuteContext['command'] = async (request, call) => {
        const decision = guard(operation, current, request);
        if (decision.kind === 'denied' && !operation.shadow) throw new CommandRefused(decision);
        if (decision.kind === 'denied') await t.record(shadowStep(current, contract, decision));
        const meta: CommandMeta = { commandId: newId('cmd'), idempotencyKey: contract.idempotencyKey };
        await t.record(
          stepOf(current, contract, {
            step: 'command',
            commandId: meta.commandId,
            digests: {
              approved: current.digest,
              ...(decision.requestedDigest ? { requested: decision.requestedDigest } : {}),
            },
            detail: { approvedScope: current.scopeDigest },
          }),
        );
        return call(request, meta);
      };
      const result = await operation.execute!(
        ready.args,
        executeContext(current, contract, t.tx.local, command),
      );
      const outcome: Outcome = isDefiniteFailure(result)
        ? { kind: 'terminal_failure', correlationId: newId('cor'), message: result.message }
        : { kind: 'succeeded', result: jsonOrNull(result) };
      await fault('before_outcome_commit');
      await writeOutcome(ctx, ctx.clock.now(), t, current, contract, outcome, undefined, fault);
      return outcome;
    });
  } catch (error) {
    if (!record) throw error;
    if (error instanceof Fenced) return storedOutcomeOf(ctx, record);
    // A store that is unavailable for a while rolled the effect back: nothing ran, so the attempt
    // stays executing for recovery to run again, never a failure a human must approve anew.
    if (
      error instanceof FencedAttemptError ||
      error instanceof OperationContractError ||
      error instanceof CorruptAuditChainError ||
      error instanceof StoreUnavailableError
    )
      throw error;
    if (error instanceof CommandRefused)
      return finish(ctx, record, contract, refusedOutcome(error), refusedStep(error));
    return finish(
      ctx,
      record,
      contract,
      crashed(ctx, record, error, 'the local effect failed and was rolled back'),
    );
  }
}

async function executeExternal(
  ctx: EngineContext,
  operation: AnyOperation,
  contract: ExecutionContract,
  fault: (point: Parameters<FaultHook>[0]) => Promise<void>,
  progress: Progress,
): Promise<Outcome> {
  const record = await ctx.store.read((tx) => tx.getProposal(contract.tenant, contract.proposalId));
  const ready = readiness(record, contract, operation);
  if (ready.kind === 'stored') return ready.outcome;
  if (ready.kind === 'corrupt') return finish(ctx, record!, contract, ready.outcome);
  return callProvider(ctx, operation, record!, contract, ready.args, fault, progress);
}

async function callProvider(
  ctx: EngineContext,
  operation: AnyOperation,
  record: ProposalRecord,
  contract: ExecutionContract,
  args: DeepReadonly<unknown>,
  fault: (point: Parameters<FaultHook>[0]) => Promise<void>,
  progress: Progress,
): Promise<Outcome> {
  // A resend continues a command already issued after revalidation: revalidating again would judge
  // the world after the provider may have acted (an invoice it already paid is no longer open).
  const resent = resentCommandOf(contract);
  const revalidation: Awaited<ReturnType<typeof revalidateArgs>> =
    resent === undefined ? await revalidateArgs(ctx, operation, record, args) : { kind: 'valid' };
  if (revalidation.kind === 'crashed') return finish(ctx, record, contract, revalidation.outcome);
  if (revalidation.kind === 'revision_required') {
    return finish(
      ctx,
      record,
      contract,
      { kind: 'revision_required', reason: revalidation.reason },
      revisionStep(revalidation.reason),
    );
  }
  // The 'revalidated' step is recorded in the command's transaction (one write fewer per
  // execution), or on its own when the executor ends without a command.
  let revalidationUnrecorded = operation.revalidate !== undefined && resent === undefined;
  const revalidatedStep = () =>
    stepOf(record, contract, {
      step: 'revalidated' as const,
      digests: { approved: record.digest },
    });
  const recordRevalidation = async () => {
    if (!revalidationUnrecorded) return;
    revalidationUnrecorded = false;
    await inTransaction(ctx, (t) => t.record(revalidatedStep()));
  };
  await fault('after_revalidation');
  const command: ExecuteContext['command'] = async (request, call) => {
    if (progress.sent)
      throw new OperationContractError(
        operation.kind,
        'an external executor makes exactly one command per attempt',
      );
    const decision = guard(operation, record, request);
    if (decision.kind === 'denied' && !operation.shadow) throw new CommandRefused(decision);
    // Handed back by a shutdown before its command: another server's sweep runs it from the start.
    if (!progress.attempt.finish()) throw new Fenced();
    // A resend is the recorded command again, under the key it was first sent with (the contract's).
    const meta: CommandMeta = {
      commandId: resent ?? newId('cmd'),
      idempotencyKey: contract.idempotencyKey,
    };
    const renewed = leaseClock(ctx);
    // The command (and so the attempt's key) is durable before the provider hears of it.
    await inTransaction(ctx, async (t) => {
      // Setting the command renews the lease, so a sweep that read the attempt before cannot fence it.
      const issued = await t.tx.updateAttempt(record.tenant, contract.attemptId, 'executing', {
        commandId: meta.commandId,
        leaseUntil: ctx.clock.now() + ctx.leaseMs,
      });
      if (!issued) throw new Fenced();
      if (revalidationUnrecorded) await t.record(revalidatedStep());
      if (decision.kind === 'denied') await t.record(shadowStep(record, contract, decision));
      await t.record(
        stepOf(record, contract, {
          step: 'command',
          commandId: meta.commandId,
          digests: {
            approved: record.digest,
            ...(decision.requestedDigest ? { requested: decision.requestedDigest } : {}),
          },
          detail: {
            approvedScope: record.scopeDigest,
            ...(resent !== undefined ? { resend: true, idempotencyKey: meta.idempotencyKey } : {}),
          },
        }),
      );
    });
    revalidationUnrecorded = false;
    await fault('before_provider_call');
    // The last fence before the provider hears of it: a worker paused past its lease, whose attempt a
    // sweep has since sent to reconciliation, must not call. While the lease the command just renewed
    // is young, no sweep can have taken it (see leaseMayHaveLapsed), and the fence is skipped.
    if (leaseMayHaveLapsed(ctx, renewed)) {
      const stillOurs = await ctx.store.transaction((tx) =>
        tx.updateAttempt(record.tenant, contract.attemptId, 'executing', {
          leaseUntil: ctx.clock.now() + ctx.leaseMs,
        }),
      );
      if (!stillOurs) throw new Fenced();
    }
    progress.sent = true;
    const response = await call(request, meta);
    await fault('after_provider_accepted');
    return response;
  };
  let result: unknown;
  try {
    result = await operation.execute!(args, executeContext(record, contract, undefined, command));
  } catch (error) {
    if (error instanceof Fenced) return storedOutcomeOf(ctx, record);
    // Nothing more can be recorded: see unrecorded().
    if (error instanceof CorruptAuditChainError) throw error;
    // The store failed while recording the command or the revalidation: recovery takes the attempt
    // over after its lease (re-run if no command was recorded, else reconciled), never a failure.
    if (error instanceof StoreUnavailableError) throw error;
    await recordRevalidation();
    // A resend's command may have reached the provider the first time: whatever stops this one
    // before or during its call leaves the attempt to reconciliation, never a terminal failure.
    if (error instanceof CommandRefused && resent === undefined)
      return finish(ctx, record, contract, refusedOutcome(error), refusedStep(error));
    if (error instanceof CommandRefused)
      return finish(ctx, record, contract, { kind: 'needs_reconciliation' }, refusedStep(error), fault);
    if (progress.sent || resent !== undefined) {
      ctx.logger.warn(
        { proposalId: record.id, runId: record.runId, attemptId: contract.attemptId, err: error },
        'provider response lost',
      );
      return finish(ctx, record, contract, { kind: 'needs_reconciliation' }, undefined, fault);
    }
    return finish(
      ctx,
      record,
      contract,
      crashed(ctx, record, error, 'the executor failed before any command was sent'),
    );
  }
  await recordRevalidation();
  if (isDefiniteFailure(result)) {
    return finish(
      ctx,
      record,
      contract,
      { kind: 'terminal_failure', correlationId: newId('cor'), message: result.message },
      undefined,
      fault,
    );
  }
  if (!progress.sent && resent !== undefined) {
    ctx.logger.warn(
      { proposalId: record.id, attemptId: contract.attemptId },
      'the executor made no command when re-sending one',
    );
    return finish(ctx, record, contract, { kind: 'needs_reconciliation' }, undefined, fault);
  }
  if (!progress.sent) {
    return finish(
      ctx,
      record,
      contract,
      crashed(
        ctx,
        record,
        new OperationContractError(operation.kind, 'external executor returned without a command'),
        'the executor made no command',
      ),
    );
  }
  await fault('before_outcome_commit');
  return finish(ctx, record, contract, { kind: 'succeeded', result: jsonOrNull(result) }, undefined, fault);
}

function jsonOrNull(value: unknown): unknown {
  try {
    return parseStoredJson(canonicalize(value ?? null));
  } catch {
    return null;
  }
}

// Shadow mode: the mismatch is evidence for the operation's owners, not a refusal.
function shadowStep(
  record: ProposalRecord,
  contract: ExecutionContract,
  decision: Extract<ExecutionDecision, { kind: 'denied' }>,
) {
  return stepOf(record, contract, {
    step: 'shadow_mismatch' as const,
    reason: decision.reason,
    digests: {
      approved: record.digest,
      ...(decision.requestedDigest ? { requested: decision.requestedDigest } : {}),
    },
    detail: {
      diff: decision.diff.map(formatScopeChange),
      issues: decision.issues.map((i) => `${i.path}: ${i.message}`),
      shadow: true,
    },
  });
}

function refusedOutcome(error: CommandRefused): Outcome {
  return failure(error.decision.reason, error.decision.message);
}

function refusedStep(error: CommandRefused) {
  return {
    step: 'denied' as const,
    reason: error.decision.reason,
    digests: error.decision.requestedDigest ? { requested: error.decision.requestedDigest } : {},
    detail: {
      diff: error.decision.diff.map(formatScopeChange),
      issues: error.decision.issues.map((i) => `${i.path}: ${i.message}`),
    },
  };
}

type ExtraStep = {
  readonly step: 'revalidated' | 'denied';
  readonly reason: string;
  readonly digests?: { readonly requested?: string };
  readonly detail: Readonly<Record<string, unknown>>;
};

/** Records the outcome in its own transaction, fenced by attempt number. */
async function finish(
  ctx: EngineContext,
  record: ProposalRecord,
  contract: ExecutionContract,
  outcome: Outcome,
  extra?: ExtraStep,
  fault?: (point: Parameters<FaultHook>[0]) => Promise<void>,
): Promise<Outcome> {
  try {
    return await inTransaction(ctx, async (t) => {
      await writeOutcome(ctx, ctx.clock.now(), t, record, contract, outcome, extra, fault);
      return outcome;
    });
  } catch (error) {
    if (error instanceof Fenced) return storedOutcomeOf(ctx, record);
    throw error;
  }
}

async function writeOutcome(
  ctx: EngineContext,
  now: number,
  t: StepTransaction,
  record: ProposalRecord,
  contract: ExecutionContract,
  outcome: Outcome,
  extra: ExtraStep | undefined,
  fault?: (point: Parameters<FaultHook>[0]) => Promise<void>,
): Promise<void> {
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

function storedOutcome(record: ProposalRecord): Outcome {
  if (!record.outcomeJson) throw new FencedAttemptError(record.id);
  return parseStoredJson(record.outcomeJson) as Outcome;
}

async function storedOutcomeOf(ctx: EngineContext, record: ProposalRecord): Promise<Outcome> {
  const current = await ctx.store.read((tx) => tx.getProposal(record.tenant, record.id));
  return storedOutcome(current ?? record);
}
