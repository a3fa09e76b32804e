import type { AttemptRecord, ProposalRecord } from '../store/records.js';
import { contractOf, type ExecutionContract } from './execution-contract.js';
import { inTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';
import { execute, type ExecuteOptions } from './execute.js';
import { idempotencyKeyOf, newId } from './ids.js';
import { firstReconcileAt } from './reconcile-due.js';
import { commandKeyOf, markResend } from './resend.js';
import { canonicalize } from '../canonical/canonicalize.js';
import type { Outcome } from '../operation/outcome.js';

/** What one recovery sweep did. */
export interface RecoverySummary {
  /** Attempts whose lease had ended and were still executing. */
  readonly examined: number;
  /** Taken over and executed again: nothing had been committed or sent. */
  readonly rerun: number;
  /** External attempts whose command may have reached the provider: now `needs_reconciliation`. */
  readonly toReconciliation: number;
  /**
   * External attempts whose command may have reached a provider that deduplicates by idempotency
   * key (`provider: { deduplicates: 'idempotency_key' }`): the recorded command re-sent under its
   * original key by a new attempt.
   */
  readonly resent: number;
  /** Gave up after `maxAttempts`: parked as `terminal_failure` for an operator. */
  readonly parked: number;
  /** Another sweep (or the worker itself) got there first. */
  readonly skipped: number;
  /**
   * Left as they were: their tenant's audit chain holds an event the engine did not write where the
   * next one goes (`corrupt_audit_chain`), so the takeover could record nothing. Taken over by a
   * sweep after an operator repairs the chain.
   */
  readonly held: number;
  /** Audit events a crash left queued between a commit and their chaining, now chained. */
  readonly chained: number;
}

/** Options of a recovery sweep. */
export interface RecoverOptions {
  /** Attempts per proposal before parking it (default 3). */
  readonly maxAttempts?: number;
  /** Most attempts examined in one sweep (default 100). */
  readonly limit?: number;
}

type Takeover =
  | { readonly kind: 'rerun'; readonly contract: ExecutionContract }
  | { readonly kind: 'resend'; readonly contract: ExecutionContract }
  | { readonly kind: 'reconcile' }
  | { readonly kind: 'parked' }
  | { readonly kind: 'skipped' }
  | { readonly kind: 'held' };

/**
 * Takes over attempts whose lease has ended without an outcome. Never re-executes blindly:
 * - a local attempt (its effect commits with its outcome, so nothing ran) is re-run as a new attempt,
 *   revalidating first;
 * - an external attempt that recorded a command may have reached the provider: when the provider
 *   deduplicates by idempotency key, a new attempt re-sends that command under its original key
 *   (the provider answers the first call's result, or makes it now); otherwise, or once
 *   `maxAttempts` is reached, it becomes `needs_reconciliation`, closed by the operation's `reconcile`;
 * - an external attempt with no command never reached the provider (the command is durable before
 *   the call): it is re-run like a local one.
 * First it chains any audit events a crash left queued (see `AuditLedger.chainQueued`). A tenant whose audit
 * chain holds an event the engine did not write keeps its queue and its attempts (`held`).
 * The old attempt is fenced: its worker, if it wakes, cannot commit. Repeated or concurrent sweeps
 * do nothing twice; after `maxAttempts` the proposal is parked for an operator.
 */
export async function recover(
  ctx: EngineContext,
  options: RecoverOptions & ExecuteOptions = {},
): Promise<RecoverySummary> {
  const maxAttempts = options.maxAttempts ?? 3;
  const chained = await ctx.ledger.chainQueued();
  const expired = await ctx.store.read((tx) => tx.listExpiredLeases(ctx.clock.now(), options.limit ?? 100));
  let rerun = 0;
  let resent = 0;
  let toReconciliation = 0;
  let parked = 0;
  let skipped = 0;
  let held = 0;
  for (const attempt of expired) {
    const takeover = await takeOver(ctx, attempt, maxAttempts);
    if (takeover.kind === 'rerun') {
      rerun++;
      await execute(ctx, takeover.contract, options);
    } else if (takeover.kind === 'resend') {
      resent++;
      await execute(ctx, takeover.contract, options);
    } else if (takeover.kind === 'reconcile') toReconciliation++;
    else if (takeover.kind === 'parked') parked++;
    else if (takeover.kind === 'held') held++;
    else skipped++;
  }
  return { examined: expired.length, rerun, resent, toReconciliation, parked, skipped, held, chained };
}

/** Another writer moved the proposal after this sweep fenced the attempt: roll the sweep back. */
class RaceLost extends Error {}

async function takeOver(ctx: EngineContext, attempt: AttemptRecord, maxAttempts: number): Promise<Takeover> {
  try {
    return await refusingCorruptChain(
      ctx,
      () => takeOverInTransaction(ctx, attempt, maxAttempts),
      (): Takeover => ({ kind: 'held' }),
      { proposalId: attempt.proposalId, attemptId: attempt.id, action: 'recover' },
    );
  } catch (error) {
    if (error instanceof RaceLost) return { kind: 'skipped' };
    throw error;
  }
}

function takeOverInTransaction(
  ctx: EngineContext,
  attempt: AttemptRecord,
  maxAttempts: number,
): Promise<Takeover> {
  return inTransaction(ctx, async (t): Promise<Takeover> => {
    const { now } = t;
    const record = await t.tx.getProposal(attempt.tenant, attempt.proposalId);
    const current = await t.tx.getAttempt(attempt.tenant, attempt.id);
    if (!record || !current || current.status !== 'executing' || current.leaseUntil >= now)
      return { kind: 'skipped' };
    if (record.status !== 'executing' || record.currentAttempt !== attempt.number) return { kind: 'skipped' };
    const operation = ctx.operations.get(record.operation);
    if (!operation) {
      // Without the operation's code this engine cannot tell what the attempt did: leave it to one that has it.
      ctx.logger.warn(
        { proposalId: record.id, operation: record.operation },
        'recovery skipped an attempt of an unknown operation',
      );
      return { kind: 'skipped' };
    }
    const mayHaveSent = operation.effect === 'external' && current.commandId !== null;
    const parking = !mayHaveSent && attempt.number >= maxAttempts;
    const resending =
      mayHaveSent && operation.provider.deduplicates === 'idempotency_key' && attempt.number < maxAttempts;
    const reconciling = mayHaveSent && !resending;
    // The fence comes first: only while the lease is still over. A worker that renewed its lease, or
    // a concurrent sweep that got here first, makes this a no-op and the sweep skips.
    const fenced = await t.tx.updateAttempt(
      record.tenant,
      attempt.id,
      'executing',
      reconciling
        ? { status: 'needs_reconciliation', finishedAt: now, leaseUntil: firstReconcileAt(ctx, now) }
        : { status: 'abandoned', finishedAt: now },
      { leaseBefore: now },
    );
    if (!fenced) return { kind: 'skipped' };
    const base = {
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      actor: 'system:recovery',
      attemptId: attempt.id,
    };

    if (reconciling) {
      const outcome: Outcome = { kind: 'needs_reconciliation' };
      if (!(await finishAs(t.tx, record, attempt, { outcome, now }))) throw new RaceLost();
      await t.record({
        ...base,
        step: 'outcome',
        commandId: current.commandId,
        digests: { approved: record.digest },
        detail: { outcome: outcome.kind, recovery: true },
      });
      return { kind: 'reconcile' };
    }
    if (parking) {
      const outcome: Outcome = {
        kind: 'terminal_failure',
        correlationId: newId('cor'),
        message: `recovery gave up after ${attempt.number} attempts; nothing was committed or sent`,
      };
      if (!(await finishAs(t.tx, record, attempt, { outcome, now }))) throw new RaceLost();
      await t.record({
        ...base,
        step: 'outcome',
        digests: { approved: record.digest },
        detail: { outcome: outcome.kind, parked: true, correlationId: outcome.correlationId },
      });
      ctx.logger.warn(
        { proposalId: record.id, attempts: attempt.number, correlationId: outcome.correlationId },
        'recovery parked a proposal',
      );
      return { kind: 'parked' };
    }
    const number = attempt.number + 1;
    const moved = await t.tx.updateProposal(
      record.tenant,
      record.id,
      { status: 'executing', attempt: attempt.number },
      { currentAttempt: number, updatedAt: now },
    );
    if (!moved) throw new RaceLost();
    const id = newId('att');
    const key = idempotencyKeyOf(record.id, number);
    // A resend carries the recorded command on: the provider knows it by the key it was first sent
    // under, so the new attempt's executor sends it under that key (its own row keeps a unique one).
    const commandKey = resending
      ? commandKeyOf(await t.tx.listAttempts(record.tenant, record.id), current)
      : undefined;
    await t.tx.insertAttempt({
      tenant: record.tenant,
      id,
      proposalId: record.id,
      number,
      idempotencyKey: key,
      status: 'executing',
      leaseUntil: now + ctx.leaseMs,
      commandId: resending ? current.commandId : null,
      startedAt: now,
      finishedAt: null,
    });
    await t.record({
      ...base,
      attemptId: id,
      step: 'claimed',
      ...(resending ? { commandId: current.commandId } : {}),
      digests: { approved: record.digest },
      detail: {
        attempt: number,
        takeoverOf: attempt.id,
        recovery: true,
        ...(commandKey !== undefined ? { resend: true, idempotencyKey: commandKey } : {}),
      },
    });
    if (commandKey !== undefined && current.commandId !== null)
      return {
        kind: 'resend',
        contract: markResend(
          contractOf(record, { id, number, idempotencyKey: commandKey }),
          current.commandId,
        ),
      };
    return { kind: 'rerun', contract: contractOf(record, { id, number, idempotencyKey: key }) };
  });
}

/** Records the recovery's outcome on the proposal (fenced by attempt number); false if another got there first. */
async function finishAs(
  tx: Parameters<Parameters<EngineContext['store']['transaction']>[0]>[0],
  record: ProposalRecord,
  attempt: AttemptRecord,
  { outcome, now }: { readonly outcome: Outcome; readonly now: number },
): Promise<boolean> {
  return tx.updateProposal(
    record.tenant,
    record.id,
    { status: 'executing', attempt: attempt.number },
    { status: outcome.kind, outcomeJson: canonicalize(outcome), updatedAt: now },
  );
}
