import { canonicalize } from '../canonical/canonicalize.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { type DeepReadonly, freeze } from '../canonical/freeze.js';
import type {
  AnyOperation,
  CommandMeta,
  DefiniteFailure,
  ExecuteContext,
  LocalTransaction,
  Revalidation,
} from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { ProposalRecord } from '../store/records.js';
import { claimedRecordOf, type ExecutionContract, verifiedArgumentsOf } from './execution-contract.js';
import { inTransaction } from './audit-step.js';
import type { EngineContext } from './engine-context.js';
import { CorruptAuditChainError, StoreUnavailableError } from '../store/store-errors.js';
import type { AttemptHandle } from './running-attempts.js';
import { corruptAuditChain } from './corrupt-audit-chain.js';
import { FencedAttemptError, OperationContractError } from './errors.js';
import type { FaultHook, FaultPoint } from './faults.js';
import { newId } from './ids.js';
import { resentCommandOf } from './resend.js';
import { leaseClock, leaseMayHaveLapsed } from './attempt-lease.js';
import { CommandRefused, guard, refusedOutcome, refusedStep, shadowStep } from './command-guard.js';
import {
  crashed,
  Fenced,
  failure,
  finish,
  revisionStep,
  stepOf,
  storedOutcome,
  storedOutcomeOf,
  writeOutcome,
} from './outcome-writer.js';

function isDefiniteFailure(value: unknown): value is DefiniteFailure {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'definite_failure'
  );
}

/** Execution options the engine threads through; `faults` exists for the fault-injection tests only. */
export interface ExecuteOptions {
  readonly faults?: FaultHook | undefined;
}

/** One execution of a claimed contract: the operation that runs it and the fault points it passes. */
interface Execution {
  readonly ctx: EngineContext;
  readonly operation: AnyOperation;
  readonly contract: ExecutionContract;
  readonly fault: (point: FaultPoint) => Promise<void>;
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
  const fault = async (point: FaultPoint) => {
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
    const execution: Execution = { ctx, operation, contract, fault };
    return operation.effect === 'local'
      ? await executeLocal(execution, progress.attempt)
      : await executeExternal(execution, progress);
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
async function executeLocal(execution: Execution, attempt: AttemptHandle): Promise<Outcome> {
  const { ctx, operation, contract, fault } = execution;
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
        await writeOutcome(t, { ctx, record: current, contract }, { at: now, outcome: ready.outcome });
        return ready.outcome;
      }
      const revalidation = await revalidateArgs(ctx, operation, current, ready.args);
      if (revalidation.kind !== 'valid') {
        const outcome: Outcome =
          revalidation.kind === 'crashed'
            ? revalidation.outcome
            : { kind: 'revision_required', reason: revalidation.reason };
        await writeOutcome(
          t,
          { ctx, record: current, contract },
          {
            at: now,
            outcome: outcome,
            extra: revalidation.kind === 'revision_required' ? revisionStep(revalidation.reason) : undefined,
          },
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
      await writeOutcome(
        t,
        { ctx, record: current, contract },
        { at: ctx.clock.now(), outcome: outcome, fault },
      );
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
      return finish({ ctx, record, contract }, { outcome: refusedOutcome(error), extra: refusedStep(error) });
    return finish(
      { ctx, record, contract },
      { outcome: crashed(ctx, record, error, 'the local effect failed and was rolled back') },
    );
  }
}

async function executeExternal(execution: Execution, progress: Progress): Promise<Outcome> {
  const { ctx, operation, contract } = execution;
  // A contract this process has just claimed starts from the row its claim wrote: reading it back
  // would prove nothing more, since the command's compare-and-set on the attempt is the fence (a
  // sweep that took the attempt over fails it) and a row could change after any read as well.
  // Once the lease may have lapsed (a pause after the claim), the row is read again.
  const claimed = claimedRecordOf(contract);
  const record =
    claimed !== undefined && !leaseMayHaveLapsed(ctx, claimed.lease)
      ? claimed.record
      : await ctx.store.read((tx) => tx.getProposal(contract.tenant, contract.proposalId));
  const ready = readiness(record, contract, operation);
  if (ready.kind === 'stored') return ready.outcome;
  if (ready.kind === 'corrupt') return finish({ ctx, record: record!, contract }, { outcome: ready.outcome });
  return callProvider(execution, record!, ready.args, progress);
}

async function callProvider(
  execution: Execution,
  record: ProposalRecord,
  args: DeepReadonly<unknown>,
  progress: Progress,
): Promise<Outcome> {
  const { ctx, operation, contract, fault } = execution;
  // A resend continues a command already issued after revalidation: revalidating again would judge
  // the world after the provider may have acted (an invoice it already paid is no longer open).
  const resent = resentCommandOf(contract);
  const revalidation: Awaited<ReturnType<typeof revalidateArgs>> =
    resent === undefined ? await revalidateArgs(ctx, operation, record, args) : { kind: 'valid' };
  if (revalidation.kind === 'crashed')
    return finish({ ctx, record, contract }, { outcome: revalidation.outcome });
  if (revalidation.kind === 'revision_required') {
    return finish(
      { ctx, record, contract },
      {
        outcome: { kind: 'revision_required', reason: revalidation.reason },
        extra: revisionStep(revalidation.reason),
      },
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
      return finish({ ctx, record, contract }, { outcome: refusedOutcome(error), extra: refusedStep(error) });
    if (error instanceof CommandRefused)
      return finish(
        { ctx, record, contract },
        { outcome: { kind: 'needs_reconciliation' }, extra: refusedStep(error), fault },
      );
    if (progress.sent || resent !== undefined) {
      ctx.logger.warn(
        { proposalId: record.id, runId: record.runId, attemptId: contract.attemptId, err: error },
        'provider response lost',
      );
      return finish({ ctx, record, contract }, { outcome: { kind: 'needs_reconciliation' }, fault });
    }
    return finish(
      { ctx, record, contract },
      { outcome: crashed(ctx, record, error, 'the executor failed before any command was sent') },
    );
  }
  await recordRevalidation();
  if (isDefiniteFailure(result)) {
    return finish(
      { ctx, record, contract },
      { outcome: { kind: 'terminal_failure', correlationId: newId('cor'), message: result.message }, fault },
    );
  }
  if (!progress.sent && resent !== undefined) {
    ctx.logger.warn(
      { proposalId: record.id, attemptId: contract.attemptId },
      'the executor made no command when re-sending one',
    );
    return finish({ ctx, record, contract }, { outcome: { kind: 'needs_reconciliation' }, fault });
  }
  if (!progress.sent) {
    return finish(
      { ctx, record, contract },
      {
        outcome: crashed(
          ctx,
          record,
          new OperationContractError(operation.kind, 'external executor returned without a command'),
          'the executor made no command',
        ),
      },
    );
  }
  await fault('before_outcome_commit');
  return finish(
    { ctx, record, contract },
    { outcome: { kind: 'succeeded', result: jsonOrNull(result) }, fault },
  );
}

function jsonOrNull(value: unknown): unknown {
  try {
    return parseStoredJson(canonicalize(value ?? null));
  } catch {
    return null;
  }
}
