import type { AuditDigests, AuditEvent, AuditStep, PendingAuditEvent } from '../audit/event.js';
import { displayHash } from '../canonical/digest.js';
import type { AuditAppender } from '../ledger/transaction-appends.js';
import type { StoreTransaction } from '../store/store.js';
import { type AuditedAction, type OverBudget, overBudget } from './audit-budget.js';
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
 * The events are pending: not chained yet, so they have no place in the chain.
 */
export type StepWriter = (
  tx: StoreTransaction,
  event: PendingAuditEvent,
  earlier: readonly PendingAuditEvent[],
) => Promise<void>;

/**
 * Called once per audit event after its transaction commits and the event is chained (metrics,
 * tracing): its `seq` and hashes are those the chain holds. Where the event was queued and
 * chained in the background, that is after the step's call returned. Must not throw.
 */
export type LifecycleObserver = (event: AuditEvent, facts: StepFacts) => void;

/** A transaction that records lifecycle steps; their log lines are written only after it commits. */
export interface StepTransaction {
  readonly tx: StoreTransaction;
  /**
   * The one clock reading of this transaction (taken again if a backend runs it again): every
   * check and every event of one decision speaks of the same instant, so an approval checked
   * before expiry is never audited at or after it.
   */
  readonly now: number;
  /** Appends one audit event to the tenant's chain inside this transaction (chained at or after its commit). */
  record(input: StepInput): Promise<PendingAuditEvent>;
  /**
   * Takes one unit of `principal`'s budget for an audited `action` that changes nothing (a refusal,
   * a read): undefined to go on and record it, or the `rate_limited` answer to give instead.
   */
  budget(action: AuditedAction, tenant: string, principal: string): OverBudget | undefined;
}

type LogLine = {
  readonly level: 'info' | 'warn';
  readonly fields: object;
  readonly message: string;
  readonly event: PendingAuditEvent;
  readonly facts: StepFacts;
};

/**
 * Runs `fn` in one store transaction. Each recorded step appends an audit event and, after the
 * commit, one log line: proposal id, run id, attempt, the short hash, the reason. Never the
 * arguments themselves. Observers are called once the events are chained.
 */
export async function inTransaction<T>(
  ctx: EngineContext,
  fn: (t: StepTransaction) => Promise<T>,
): Promise<T> {
  const lines: LogLine[] = [];
  const result = await ctx.ledger.transaction(
    (tx, audit) => {
      // A backend may run the callback again (a PostgreSQL deadlock): only the committed run's lines count.
      lines.length = 0;
      const now = ctx.clock.now();
      return fn({
        tx,
        now,
        record: (input) => append({ ctx, tx, audit, now, lines }, input),
        budget: (action, tenant, principal) =>
          overBudget(ctx.auditBudget, action, { tenant, principal }, now),
      });
    },
    // Committed is enough to go on: events queued under contention are chained right after, and
    // the log lines do not read their place in the chain. Observers do: they are called once the
    // events are chained (for queued events, when their pass ends), never with a pending one.
    {
      chainInBackground: true,
      ...(ctx.observers.length > 0 ? { onChained: (events) => observe(ctx, lines, events) } : {}),
    },
  );
  for (const line of lines) ctx.logger[line.level](line.fields, line.message);
  return result;
}

/** Tells the observers of each committed step, with its event as chained. */
function observe(ctx: EngineContext, lines: readonly LogLine[], chained: readonly AuditEvent[]): void {
  const byId = new Map(chained.map((event) => [event.id, event]));
  for (const line of lines) {
    const event = byId.get(line.event.id);
    if (event === undefined) {
      // Committed but left queued (its pass failed): chained later, by a pass that has no observers.
      ctx.logger.warn(
        { step: line.event.step, tenant: line.event.tenant, eventId: line.event.id },
        'an audit event was committed but not chained yet; its lifecycle observers were not called',
      );
      continue;
    }
    for (const observer of ctx.observers) {
      try {
        observer(event, line.facts);
      } catch (error) {
        ctx.logger.error({ err: error, step: event.step }, 'a lifecycle observer threw; ignored');
      }
    }
  }
}

/** Where a transaction's steps are appended: its store transaction, ledger appender, instant and log lines. */
interface StepScope {
  readonly ctx: EngineContext;
  readonly tx: StoreTransaction;
  readonly audit: AuditAppender;
  readonly now: number;
  readonly lines: LogLine[];
}

async function append(scope: StepScope, input: StepInput): Promise<PendingAuditEvent> {
  const { ctx, tx, audit, now, lines } = scope;
  const draft: PendingAuditEvent = {
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
    at: now,
    id: newId('evt'),
  };
  audit.append(draft);
  const event = draft;
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
