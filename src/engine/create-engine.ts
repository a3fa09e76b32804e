import { ConfigurationError } from '../canonical/errors.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { Store } from '../store/store.js';
import type { Grant } from '../grants/grant.js';
import type { Actor } from '../operation/actor.js';
import { type GrantInput, type GrantResult, grant, listGrants, type RevokeResult, revoke } from './grants.js';
import { type ApproveInput, type ApproveResult, approve, type ExecutionContract } from './approve.js';
import { type DeclineInput, type DeclineResult, decline } from './decline.js';
import { type DecisionAction, type DecisionRight, decisionRight } from './decision-right.js';
import { type EditInput, type EditResult, edit } from './edit.js';
import type { LifecycleObserver } from './audit-step.js';
import { type Clock, type EngineContext, type Logger, silentLogger } from './engine-context.js';
import { execute } from './execute.js';
import { expireDue } from './expire.js';
import { type ExpireVersionInput, expireVersion } from './expire-version.js';
import { faultsOf } from './faults.js';
import { type HandbackItem, handback } from './handback.js';
import type { Proposal } from './proposal.js';
import { type ProposeInput, type ProposeResult, propose } from './propose.js';
import {
  type ProposalLimits,
  type ProposalLimitsOption,
  proposalQuota,
  type QuotaSubject,
  type RateLimited,
  resolveProposalLimits,
} from './proposal-quota.js';
import {
  getProposal,
  type ListInput,
  listProposals,
  type AuditLine,
  type AuditPage,
  type AuditPageInput,
  type ProposalPage,
  proposalAudit,
  proposalAuditPage,
} from './queries.js';
import { type ProposalTimeline, proposalTimeline } from './audit-timeline.js';
import { type ReconcileInput, type ReconcileResult, reconcile } from './reconcile.js';
import { type RecoverOptions, type RecoverySummary, recover } from './recover.js';

/** Everything an engine is wired from. */
export interface EngineOptions {
  readonly store: Store;
  readonly operations: readonly AnyOperation[];
  /** Defaults to the system clock. */
  readonly clock?: Clock;
  /** A pino logger (or anything with info/warn/error). Defaults to silent. */
  readonly logger?: Logger;
  /** At least 32 bytes: seals proposals and audit events against anyone who can write the database. */
  readonly sealKey?: string | Uint8Array;
  /** Operator roles that may approve, decline, edit and reconcile. Default `['approver', 'admin']`. */
  readonly approverRoles?: readonly string[];
  /**
   * Lets the operator who edited a proposal approve the new one, for every operation. Off by
   * default: the proposer and the editor never approve (four eyes). Each such approval is audited
   * with `editorApproval: true`. Per operation: `allowEditorApproval` in `defineOperation`.
   */
  readonly allowEditorApproval?: boolean;
  /** How long an attempt may run before recovery may take it over. Default 5 minutes. */
  readonly leaseMs?: number;
  /** Called after each committed lifecycle step (Prometheus metrics: `createLifecycleMetrics` in `countersign/observability`). */
  readonly observers?: readonly LifecycleObserver[];
  /** Run the store's migrations on creation (default true). */
  readonly migrate?: boolean;
  /**
   * Proposal quotas per agent and per tenant, on by default ({@link DEFAULT_PROPOSAL_LIMITS}:
   * 30 a minute and 50 pending per agent, 300 a minute and 1,000 pending per tenant). Over a
   * limit, `propose` answers `rate_limited` with a `retryAfterMs`. `false` turns them off.
   */
  readonly limits?: ProposalLimitsOption;
  /** Called for each proposal a quota refused (metrics: `createLifecycleMetrics` in `countersign/observability`). Must not throw. */
  readonly onRateLimited?: (refused: RateLimited, subject: QuotaSubject) => void;
}

/** `completed` with the outcome of this approval's execution, a replay's stored outcome, or the refusal. */
export type ApproveAndExecuteResult =
  | { readonly kind: 'completed'; readonly outcome: Outcome; readonly contract: ExecutionContract }
  | Exclude<ApproveResult, { kind: 'claimed' }>;

/** The lifecycle of human-approved operations, bound to one store and one set of operations. */
export interface Engine {
  /** The registered operations by kind. */
  readonly operations: ReadonlyMap<string, AnyOperation>;
  /** Operator roles that may approve, decline, edit and reconcile. */
  readonly approverRoles: readonly string[];
  /** Whether an editor may approve their own edit for every operation (see {@link EngineOptions}). */
  readonly allowEditorApproval: boolean;
  /** The proposal quotas this engine enforces. */
  readonly limits: ProposalLimits;
  /**
   * Turns a model's request into a frozen, pending proposal (or an invalid request the model can
   * correct, or `rate_limited` when the agent or its tenant is over a quota).
   */
  propose(input: ProposeInput): Promise<ProposeResult>;
  /** Delegates a bounded policy to an agent (admin only). Never created from a proposal's card. */
  grant(input: GrantInput): Promise<GrantResult>;
  /** Revokes a grant (admin only). */
  revoke(input: { tenant: string; grantId: string; actor: Actor }): Promise<RevokeResult>;
  /** A tenant's grants with their usage. */
  grants(tenant: string, query?: { subject?: string; limit?: number }): Promise<Grant[]>;
  /**
   * The atomic claim: `claimed(contract)` | `already_completed(outcome)` | `not_approvable(reason)`,
   * or `awaiting_approvals` when the proposal's frozen policy needs more distinct approvers (the
   * approval that completes the quorum claims).
   */
  approve(input: ApproveInput): Promise<ApproveResult>;
  /** Executes a claimed contract exactly once and returns the stored outcome. */
  execute(contract: ExecutionContract): Promise<Outcome>;
  /** `approve`, then `execute` when claimed: what an approval button does. */
  approveAndExecute(input: ApproveInput): Promise<ApproveAndExecuteResult>;
  decline(input: DeclineInput): Promise<DeclineResult>;
  /** A new freeze that supersedes the old proposal; approval is required again. */
  edit(input: EditInput): Promise<EditResult>;
  reconcile(input: ReconcileInput): Promise<ReconcileResult>;
  /** Takes over attempts whose lease ended: re-runs what never ran, sends the rest to reconciliation. */
  recover(options?: RecoverOptions): Promise<RecoverySummary>;
  /** Expires pending proposals past their expiry; returns how many. */
  expireDue(): Promise<number>;
  /** Expires pending proposals of an operation below a scope version (`unsupported_scope_version`). */
  expireVersion(input: ExpireVersionInput): Promise<{ expired: number; tenants: Record<string, number> }>;
  get(tenant: string, proposalId: string): Promise<Proposal | undefined>;
  list(tenant: string, input?: ListInput): Promise<ProposalPage>;
  /** Every audit event of a proposal, in chain order (all of them: views should page or use {@link timeline}). */
  audit(tenant: string, proposalId: string): Promise<AuditLine[]>;
  /**
   * One page of a proposal's audit events, in chain order, by an opaque cursor.
   *
   * @throws {ConfigurationError} on a cursor this engine did not return (`isAuditCursor` checks).
   */
  auditPage(tenant: string, proposalId: string, input?: AuditPageInput): Promise<AuditPage>;
  /** A proposal's audit events for an operator: every decision, repeated refusals collapsed. */
  timeline(tenant: string, proposalId: string): Promise<ProposalTimeline>;
  /** Safe text about a run's proposals for the next model turn. */
  handback(input: { tenant: string; runId: string; limit?: number }): Promise<HandbackItem[]>;
  /**
   * Whether `actor` may take `action` (default `approve`) on `proposal`, judged the way the engine
   * judges the decision itself: tenant, approver role, the operation's `authorize`, the frozen
   * policy's roles, separation of duties, an earlier approval toward a quorum. A console shows a
   * decision's button exactly when this is `allowed`, and shows the reason when it is not.
   */
  mayDecide(actor: Actor, proposal: Proposal, action?: DecisionAction): DecisionRight;
  /** Closes the store. */
  close(): Promise<void>;
}

/**
 * Creates an engine: registers operations, migrates the store, and wires the lifecycle steps.
 *
 * @example
 * const engine = await createEngine({ store: sqliteStore({ path: 'app.db' }), operations: [payInvoice] });
 * const proposed = await engine.propose({ operation: 'invoice.pay', request: { invoice_id: 'inv-104' },
 *   tenant: 'acme', resource: 'invoice:inv-104', requestedBy: 'agent:support', runId });
 */
export async function createEngine(options: EngineOptions): Promise<Engine> {
  const operations = new Map<string, AnyOperation>();
  for (const operation of options.operations) {
    if (operations.has(operation.kind))
      throw new ConfigurationError(`operations: "${operation.kind}" is registered twice`);
    operations.set(operation.kind, operation);
  }
  if (options.sealKey !== undefined && Buffer.byteLength(options.sealKey as string) < 32) {
    throw new ConfigurationError('sealKey: must be at least 32 bytes');
  }
  const ctx: EngineContext = Object.freeze({
    store: options.store,
    operations,
    clock: options.clock ?? { now: () => Date.now() },
    logger: options.logger ?? silentLogger,
    sealKey: options.sealKey,
    approverRoles: options.approverRoles ?? ['approver', 'admin'],
    leaseMs: options.leaseMs ?? 5 * 60_000,
    allowEditorApproval: options.allowEditorApproval ?? false,
    observers: options.observers ?? [],
  });
  const quota = proposalQuota({
    store: ctx.store,
    clock: ctx.clock,
    logger: ctx.logger,
    limits: resolveProposalLimits(options.limits),
    ...(options.onRateLimited ? { onRateLimited: options.onRateLimited } : {}),
  });
  if (options.migrate !== false) await options.store.migrate();
  const executeOptions = { faults: faultsOf(options) };
  return Object.freeze({
    operations,
    approverRoles: ctx.approverRoles,
    allowEditorApproval: ctx.allowEditorApproval,
    limits: quota.limits,
    propose: (input: ProposeInput) => quota.admit(input, () => propose(ctx, input, executeOptions)),
    grant: (input: GrantInput) => grant(ctx, input),
    revoke: (input: { tenant: string; grantId: string; actor: Actor }) => revoke(ctx, input),
    grants: (tenant: string, query?: { subject?: string; limit?: number }) => listGrants(ctx, tenant, query),
    approve: (input: ApproveInput) => approve(ctx, input),
    execute: (contract: ExecutionContract) => execute(ctx, contract, executeOptions),
    approveAndExecute: async (input: ApproveInput): Promise<ApproveAndExecuteResult> => {
      const result = await approve(ctx, input);
      if (result.kind !== 'claimed') return result;
      return {
        kind: 'completed',
        outcome: await execute(ctx, result.contract, executeOptions),
        contract: result.contract,
      };
    },
    decline: (input: DeclineInput) => decline(ctx, input),
    edit: (input: EditInput) => edit(ctx, input),
    reconcile: (input: ReconcileInput) => reconcile(ctx, input),
    recover: (recoverOptions?: RecoverOptions) => recover(ctx, { ...recoverOptions, ...executeOptions }),
    expireDue: () => expireDue(ctx),
    expireVersion: (input: ExpireVersionInput) => expireVersion(ctx, input),
    get: (tenant: string, id: string) => getProposal(ctx, tenant, id),
    list: (tenant: string, input?: ListInput) => listProposals(ctx, tenant, input),
    audit: (tenant: string, id: string) => proposalAudit(ctx, tenant, id),
    auditPage: (tenant: string, id: string, input?: AuditPageInput) =>
      proposalAuditPage(ctx, tenant, id, input),
    timeline: (tenant: string, id: string) => proposalTimeline(ctx, tenant, id),
    handback: (input: { tenant: string; runId: string; limit?: number }) => handback(ctx, input),
    mayDecide: (actor: Actor, proposal: Proposal, action: DecisionAction = 'approve') =>
      decisionRight(
        ctx,
        actor,
        {
          tenant: proposal.tenant,
          operation: proposal.operation,
          scope: proposal.scope,
          requestedBy: proposal.requestedBy,
          editedBy: proposal.editedBy,
          policy: proposal.approvals,
          approvedBy: proposal.approvals.given.map((g) => g.by),
        },
        action,
      ),
    close: () => options.store.close(),
  });
}
