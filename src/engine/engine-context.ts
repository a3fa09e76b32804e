import type { ApproverDirectory } from './approver-directory.js';
import type { AuditBudget } from './audit-budget.js';
import type { RunningAttempts } from './running-attempts.js';
import type { AuditChainer } from '../audit/chain.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { AuditLedger } from '../ledger/audit-ledger.js';
import type { Store } from '../store/store.js';
import type { LifecycleObserver, StepWriter } from './audit-step.js';
import type { ReconcileBackoff } from './reconcile-due.js';

/** Milliseconds since the epoch; injected so expiry and leases can be tested. */
export interface Clock {
  now(): number;
}

/** The slice of a pino logger the engine writes to: one line per lifecycle step. */
export interface Logger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** What every lifecycle step is given: the wiring of one engine. */
export interface EngineContext {
  readonly store: Store;
  /** Appends and chains this engine's audit events over `store`. */
  readonly ledger: AuditLedger;
  readonly operations: ReadonlyMap<string, AnyOperation>;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly sealKey: string | Uint8Array | undefined;
  /** Links audit events with `sealKey` (made once). */
  readonly chainer: AuditChainer;
  /** Operator roles that may approve, decline and edit (default `approver`, `admin`). */
  readonly approverRoles: readonly string[];
  /** How long a claimed attempt may run before a recovery sweep may take it over. */
  readonly leaseMs: number;
  /** When the automatic reconciliation asks the provider again about a `needs_reconciliation` attempt. */
  readonly reconcileBackoff: ReconcileBackoff;
  /** How often the host runs the recovery sweep, when it said so: only for telling callers when to retry. */
  readonly sweepIntervalMs: number | undefined;
  /** Lets an editor approve their own edit for every operation (audited); off by default. */
  readonly allowEditorApproval: boolean;
  /** Re-checks earlier approvals of a quorum against the directory; without one they count as given. */
  readonly approverDirectory: ApproverDirectory | undefined;
  /** Called after each committed step (metrics, tracing). */
  readonly observers: readonly LifecycleObserver[];
  /** Called inside each step's transaction (the notification outbox). */
  readonly stepWriters: readonly StepWriter[];
  /** Bounds the refusals and reads one principal may have audited per minute. */
  readonly auditBudget: AuditBudget;
  /** The attempts this engine is executing now (what a shutdown hands back). */
  readonly running: RunningAttempts;
}

/** A logger that writes nothing. */
export const silentLogger: Logger = Object.freeze({
  info: () => {},
  warn: () => {},
  error: () => {},
});
