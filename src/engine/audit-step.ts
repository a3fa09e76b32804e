import type { AuditDigests, AuditEvent, AuditStep } from '../audit/event.js';
import { displayHash } from '../canonical/digest.js';
import type { StoreTransaction } from '../store/store.js';
import type { EngineContext } from './engine-context.js';
import { newId } from './ids.js';

/** One lifecycle step to record. */
export interface StepInput {
  readonly tenant: string;
  readonly proposalId: string;
  readonly runId: string;
  readonly step: AuditStep;
  readonly actor: string;
  readonly reason?: string | null;
  readonly attemptId?: string | null;
  readonly commandId?: string | null;
  readonly digests?: AuditDigests;
  readonly detail?: Readonly<Record<string, unknown>>;
  /** For observers only (metrics, traces); not part of the audit event. */
  readonly operation?: string;
  /** For observers only: when the proposal was created, for time-to-decision. */
  readonly proposedAt?: number;
}

/** What observers learn about each committed step besides the audit event. */
export interface StepFacts {
  readonly operation: string | undefined;
  readonly proposedAt: number | undefined;
}

/**
 * Called inside the step's transaction right after its audit event is appended, with the events
 * this transaction recorded before it: rows written here commit or roll back with the step (the
 * notification outbox). A backend may run a transaction again, so a writer has no other effects.
 */
export type StepWriter = (
  tx: StoreTransaction,
  event: AuditEvent,
  earlier: readonly AuditEvent[],
) => Promise<void>;

/** Called once per audit event after its transaction commits (metrics, tracing). Must not throw. */
export type LifecycleObserver = (event: AuditEvent, facts: StepFacts) => void;

/** A transaction that records lifecycle steps; their log lines are written only after it commits. */
export interface StepTransaction {
  readonly tx: StoreTransaction;
  /** Appends one audit event to the tenant's chain inside this transaction. */
  record(input: StepInput): Promise<AuditEvent>;
}

type LogLine = {
  readonly level: 'info' | 'warn';
  readonly fields: object;
  readonly message: string;
  readonly event: AuditEvent;
  readonly facts: StepFacts;
};

/**
 * Runs `fn` in one store transaction. Each recorded step appends an audit event and, after the
 * commit, one log line: proposal id, run id, attempt, the short hash, the reason. Never the
 * arguments themselves.
 */
export async function inTransaction<T>(
  ctx: EngineContext,
  fn: (t: StepTransaction) => Promise<T>,
): Promise<T> {
  const lines: LogLine[] = [];
  const result = await ctx.store.transaction(
    (tx) => {
      // A backend may run the callback again (a PostgreSQL deadlock): only the committed run's lines count.
      lines.length = 0;
      return fn({ tx, record: (input) => append(ctx, tx, input, lines) });
    },
    // Committed is enough to go on: events queued under contention are chained right after, and
    // nothing here (log lines, observers) reads their place in the chain.
    { chainInBackground: true },
  );
  for (const line of lines) {
    ctx.logger[line.level](line.fields, line.message);
    for (const observer of ctx.observers) {
      try {
        observer(line.event, line.facts);
      } catch (error) {
        ctx.logger.error({ err: error, step: line.event.step }, 'a lifecycle observer threw; ignored');
      }
    }
  }
  return result;
}

async function append(
  ctx: EngineContext,
  tx: StoreTransaction,
  input: StepInput,
  lines: LogLine[],
): Promise<AuditEvent> {
  const draft = {
    tenant: input.tenant,
    proposalId: input.proposalId,
    attemptId: input.attemptId ?? null,
    runId: input.runId,
    step: input.step,
    actor: input.actor,
    reason: input.reason ?? null,
    digests: input.digests ?? {},
    commandId: input.commandId ?? null,
    detail: input.detail ?? {},
    at: ctx.clock.now(),
    id: newId('evt'),
  };
  const event = await tx.appendAudit(input.tenant, draft, ctx.chainer);
  if (ctx.stepWriters.length > 0) {
    const earlier = lines.map((line) => line.event);
    for (const writer of ctx.stepWriters) await writer(tx, event, earlier);
  }
  const shown = input.digests?.approved ?? input.digests?.proposed ?? input.digests?.seen;
  const fields = {
    step: input.step,
    tenant: input.tenant,
    proposalId: input.proposalId,
    runId: input.runId,
    ...(input.attemptId ? { attemptId: input.attemptId } : {}),
    ...(input.commandId ? { commandId: input.commandId } : {}),
    ...(shown ? { hash: displayHash(shown) } : {}),
    ...(input.digests?.requested ? { requested: displayHash(input.digests.requested) } : {}),
    ...(input.reason ? { reason: input.reason } : {}),
    actor: input.actor,
  };
  const facts: StepFacts = { operation: input.operation, proposedAt: input.proposedAt };
  lines.push(
    input.step === 'denied'
      ? { level: 'warn', fields, message: `denied ${input.reason ?? ''}`.trim(), event, facts }
      : { level: 'info', fields, message: input.step, event, facts },
  );
  return event;
}
