import { auditChainer } from '../audit/chain.js';
import { AuditLedger } from '../ledger/audit-ledger.js';
import { ConfigurationError } from '../canonical/errors.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { Store } from '../store/store.js';
import type { DeepReadonly } from '../canonical/freeze.js';
import { MIN_SEAL_KEY_BYTES } from '../canonical/seal.js';
import type { Grant } from '../grants/grant.js';
import type { Actor } from '../operation/actor.js';
import {
  type GrantInput,
  type GrantResult,
  type TypedGrantInput,
  getGrant,
  grant,
  listGrants,
  type RevokeResult,
  revoke,
} from './grants.js';
import { type ApproveInput, type ApproveResult, approve } from './approve.js';
import type { ExecutionContract } from './execution-contract.js';
import type { ApproverDirectory } from './approver-directory.js';
import { AuditBudget, type AuditedActionLimits, resolveAuditedLimits } from './audit-budget.js';
import { type WithdrawResult, withdrawLapsedApprovals } from './withdraw-approvals.js';
import { type DeclineInput, type DeclineResult, decline } from './decline.js';
import { type DecisionAction, type DecisionRight, decisionRight, factsOf } from './decision-right.js';
import { countNeeding, listNeeding } from './needs-you.js';
import { escalateDue, remindDue } from './escalate.js';
import {
  type DeleteRoutingResult,
  deleteGroup,
  deleteRoute,
  type Group,
  listGroups,
  listRoutes,
  type Route,
  type RouteInput,
  type SaveGroupResult,
  type SaveRouteResult,
  saveGroup,
  saveRoute,
} from './route-admin.js';
import { type EditInput, type EditResult, edit } from './edit.js';
import type { LifecycleObserver, StepWriter } from './audit-step.js';
import { type Clock, type EngineContext, type Logger, silentLogger } from './engine-context.js';
import { execute } from './execute.js';
import { expireDue } from './expire.js';
import { type ExpireVersionInput, expireVersion } from './expire-version.js';
import { faultsOf } from './faults.js';
import { releaseLeases, RunningAttempts } from './running-attempts.js';
import type { LocaleOptions } from '../i18n/localizer.js';
import { type HandbackInput, type HandbackItem, handback } from './handback.js';
import type {
  ArgumentsOf,
  ContractOf,
  IsTyped,
  OperationKind,
  Operations,
  OutcomeOf,
  ProposalOf,
  ScopeOf,
} from './operation-types.js';
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
  type CountInput,
  countListed,
  type ListInput,
  listProposals,
  type AuditLine,
  type AuditPage,
  type AuditPageInput,
  type AuditSince,
  type AuditSinceInput,
  type ProposalPage,
  proposalAudit,
  proposalAuditPage,
  tenantAuditSince,
} from './queries.js';
import { type ProposalTimeline, proposalTimeline } from './audit-timeline.js';
import { type RelatedProposals, relatedProposals } from './related-proposals.js';
import type { AnyReadTool } from '../operation/define-read-tool.js';
import { type ReadBinding, type ReadResult, read } from './read.js';
import { type ReconcileInput, type ReconcileResult, reconcile } from './reconcile.js';
import { type RecoverOptions, type RecoverySummary, recover } from './recover.js';
import {
  DEFAULT_RECONCILE_BACKOFF,
  type ReconcileBackoff,
  type ReconcileDueSummary,
  reconcileDue,
} from './reconcile-due.js';

/** Everything an engine is wired from. */
export interface EngineOptions<Ops extends Operations = Operations> {
  readonly store: Store;
  /** The operations it can propose and execute; their kinds and types make the engine typed (see {@link Engine}). */
  readonly operations: Ops;
  /** Task-specific read tools (`defineReadTool`): the adapters and the MCP server expose them beside the proposal tools. */
  readonly readTools?: readonly AnyReadTool[];
  /** Defaults to the system clock. */
  readonly clock?: Clock;
  /** A pino logger (or anything with info/warn/error). Defaults to silent. */
  readonly logger?: Logger;
  /** At least `MIN_SEAL_KEY_BYTES` (32) bytes: seals proposals and audit events against anyone who can write the database. */
  readonly sealKey?: string | Uint8Array;
  /** Operator roles that may approve, decline, edit and reconcile. Default `['approver', 'admin']`. */
  readonly approverRoles?: readonly string[];
  /**
   * Lets the operator who edited a proposal approve the new one, for every operation. Off by
   * default: the proposer and the editor never approve (four eyes). Each such approval is audited
   * with `editorApproval: true`. Per operation: `allowEditorApproval` in `defineOperation`.
   */
  readonly allowEditorApproval?: boolean;
  /**
   * The directory an approval completing a quorum re-checks every earlier approver against: one
   * who was disabled, lost the role or left the tenant since no longer counts (`approval_withdrawn`,
   * audited). Without it an approval counts as it was given. `countersign serve` passes its own.
   */
  readonly approverDirectory?: ApproverDirectory;
  /** How long an attempt may run before recovery may take it over. Default 5 minutes. */
  readonly leaseMs?: number;
  /**
   * How often the application runs {@link TypedEngine.recover} (`countersign serve --sweep-interval`).
   * The engine runs no sweep itself: this only tells an approval refused `recovering` (its
   * attempt's worker stopped, its lease ended) when to retry (`retryAfterMs`).
   */
  readonly sweepIntervalMs?: number;
  /**
   * When {@link TypedEngine.reconcileDue} asks the provider about an attempt left
   * `needs_reconciliation`: `firstMs` after (default 10 s), then after as long again as it has
   * waited, at most `maxMs` between tries (default 10 minutes).
   */
  readonly reconcileBackoff?: ReconcileBackoff;
  /** Called after each committed lifecycle step (Prometheus metrics: `createLifecycleMetrics` in `countersign/observability`). */
  readonly observers?: readonly LifecycleObserver[];
  /**
   * Called inside each lifecycle step's transaction after its audit event: rows that must commit
   * with the step. `notificationOutbox(…)` from `countersign/server` writes the notification outbox.
   */
  readonly stepWriters?: readonly StepWriter[];
  /** Run the store's migrations on creation (default true). */
  readonly migrate?: boolean;
  /**
   * Proposal quotas per agent and per tenant, on by default ({@link DEFAULT_PROPOSAL_LIMITS}:
   * 30 a minute and 50 pending per agent, 300 a minute and 1,000 pending per tenant). Over a
   * limit, `propose` answers `rate_limited` with a `retryAfterMs`. `false` turns them off.
   */
  readonly limits?: ProposalLimitsOption;
  /**
   * Refused decisions and read-tool calls one principal may have audited per minute (default 60
   * and 120); past them the call is answered `rate_limited` with nothing written. `false` lifts both.
   *
   * @example
   * createEngine({ store, operations, auditedLimits: { readsPerMinute: 600 } });
   */
  readonly auditedLimits?: Partial<AuditedActionLimits> | false;
  /** Called for each proposal a quota refused (metrics: `createLifecycleMetrics` in `countersign/observability`). Must not throw. */
  readonly onRateLimited?: (refused: RateLimited, subject: QuotaSubject) => void;
}

/** `completed` with the outcome of this approval's execution, a replay's stored outcome, or the refusal. */
export type ApproveAndExecuteResult<Ops extends Operations = Operations> =
  | Completed<Ops, OperationKind<Ops>>
  | Exclude<ApproveResult<Ops>, { kind: 'claimed' }>;

// One member per kind, so a contract always comes with its own kind's outcome.
type Completed<Ops extends Operations, K extends OperationKind<Ops>> =
  K extends OperationKind<Ops>
    ? {
        readonly kind: 'completed';
        readonly outcome: OutcomeOf<Ops, K>;
        readonly contract: ContractOf<Ops, K>;
      }
    : never;

/**
 * The lifecycle of human-approved operations, bound to one store and one set of operations.
 *
 * `Ops` is the list of operations it was created with. With literal kinds (every operation made
 * by `defineOperation`), `propose` accepts only those kinds, each with its own request type, and
 * every proposal, contract and outcome it returns is a union discriminated on `operation`. The
 * default, `readonly AnyOperation[]`, is an engine whose kinds are known only at run time (the
 * server's and the adapters' view): `operation: string`, `unknown` parts. A typed engine is
 * assignable to it.
 *
 * @example
 * const engine = await createEngine({ store, operations: [payInvoice, refund] });
 * const result = await engine.proposals.propose({ operation: 'invoice.pay', request: { invoice_id: 'inv-104' }, … });
 * if (result.kind === 'proposed') result.proposal.preview; // payInvoice's preview type
 */
export type Engine<Ops extends Operations = Operations> =
  IsTyped<Ops> extends true ? TypedEngine<Ops> : UntypedEngine;

/**
 * An engine whose kinds are known only at run time: {@link TypedEngine}'s members with `string`
 * kinds and `unknown` parts. A separate interface (not `TypedEngine<Operations>`), so TypeScript
 * compares a typed engine with it member by member, where a typed engine fits.
 */
export interface UntypedEngine extends UntypedMembers {}

// A homomorphic copy keeps each member's documentation and its method (bivariant) declaration;
// each group is copied too, so a typed group is compared with it member by member.
type Copy<T> = { [M in keyof T]: T[M] };
type UntypedMembers = Copy<Omit<TypedEngine<Operations>, 'proposals' | 'grants'>> & {
  readonly proposals: Copy<EngineProposals<Operations>>;
  readonly grants: Copy<EngineGrants<Operations>>;
};

/**
 * The operation kinds of an engine type: a typed engine's registered kinds, else `string`. What
 * adapters use to check the kinds an application names (`proposalTools(engine, binding, { operations })`).
 */
export type EngineKind<E extends Engine> = E extends TypedEngine<infer Ops> ? OperationKind<Ops> : string;

/** What `grant` takes for kinds `K`: typed by their scopes in a typed engine, else {@link GrantInput}. */
export type GrantInputOf<Ops extends Operations, K extends OperationKind<Ops>> =
  IsTyped<Ops> extends true ? TypedGrantInput<K, ScopeOf<Ops, K>> : GrantInput;

/**
 * The engine of a list of operations with literal kinds: see {@link Engine}. Its lifecycle calls
 * are grouped by the thing they act on: `proposals`, `grants`, `audit`, `reads`, `sweeps`.
 */
export interface TypedEngine<Ops extends Operations> {
  /** The registered operations by kind. */
  readonly operations: ReadonlyMap<string, Ops[number]>;
  /** The registered read tools by name. */
  readonly readTools: ReadonlyMap<string, AnyReadTool>;
  /** Operator roles that may approve, decline, edit and reconcile. */
  readonly approverRoles: readonly string[];
  /** Whether an editor may approve their own edit for every operation (see {@link EngineOptions}). */
  readonly allowEditorApproval: boolean;
  /** The proposal quotas this engine enforces. */
  readonly limits: ProposalLimits;
  /** Proposals: propose, approve or decline, edit, execute, reconcile, list and read them. */
  readonly proposals: EngineProposals<Ops>;
  /** Grants: create, revoke and list bounded approvals. */
  readonly grants: EngineGrants<Ops>;
  /** The audit trail of a proposal or a tenant. */
  readonly audit: EngineAudit;
  /** Read tools. */
  readonly reads: EngineReads;
  /** Routes: which group (and channel) decides which proposals; admin-managed, audited. */
  readonly routes: EngineRoutes;
  /** Groups: the named sets of approvers routes send proposals to; admin-managed, audited. */
  readonly groups: EngineGroups;
  /** Expiry, recovery and automatic reconciliation, escalation and reminders, and handing attempts back at shutdown. */
  readonly sweeps: EngineSweeps;
  /** Closes the store. */
  close(): Promise<void>;
}

/** `engine.proposals`: a proposal from the model's request to its outcome, and what a desk reads of it. */
export interface EngineProposals<Ops extends Operations = Operations> {
  /**
   * Turns a model's request into a frozen, pending proposal (or an invalid request the model can
   * correct, or `rate_limited` when the agent or its tenant is over a quota).
   */
  propose<K extends OperationKind<Ops>>(input: ProposeInput<Ops, K>): Promise<ProposeResult<Ops, K>>;
  /**
   * The atomic claim: `claimed(contract)` | `already_completed(outcome)` | `not_approvable(reason)`,
   * or `awaiting_approvals` when the proposal's frozen policy needs more distinct approvers (the
   * approval that completes the quorum claims).
   */
  approve(input: ApproveInput): Promise<ApproveResult<Ops>>;
  /** Executes a claimed contract exactly once and returns the stored outcome. */
  execute<K extends OperationKind<Ops>>(
    contract: ExecutionContract<K, DeepReadonly<ArgumentsOf<Ops, K>>>,
  ): Promise<OutcomeOf<Ops, K>>;
  /** `approve`, then `execute` when claimed: what an approval button does. */
  approveAndExecute(input: ApproveInput): Promise<ApproveAndExecuteResult<Ops>>;
  decline(input: DeclineInput): Promise<DeclineResult>;
  /** A new freeze that supersedes the old proposal; approval is required again. */
  edit(input: EditInput): Promise<EditResult<Ops>>;
  /** Asks the provider about one `needs_reconciliation` proposal's attempt and records its answer (an operator's button). */
  reconcile(input: ReconcileInput): Promise<ReconcileResult<Ops>>;
  /** One proposal of the tenant (narrow it on `operation`), or undefined. */
  get(tenant: string, proposalId: string): Promise<ProposalOf<Ops> | undefined>;
  /**
   * A tenant's proposals, newest first; with `operation`, typed as that kind's. With `decidableBy`,
   * only the pending proposals that actor may still approve ("Needs you", see {@link ListInput}).
   */
  list<K extends OperationKind<Ops> = OperationKind<Ops>>(
    tenant: string,
    input?: ListInput<K>,
  ): Promise<ProposalPage<Ops, K>>;
  /** How many of a tenant's proposals match `input` (all of them, however many pages a list takes). */
  count(tenant: string, input?: CountInput<OperationKind<Ops>>): Promise<number>;
  /**
   * What a reviewer must see beside a proposal, in its own tenant: the edit it supersedes and the
   * one that superseded it, the proposal it replaces after `revision_required` (and the other way),
   * and the other pending proposals with the same scope.
   */
  related(proposal: Proposal): Promise<RelatedProposals>;
  /** Safe text about a run's proposals for the next model turn; English unless `options.locale` says otherwise. */
  handback(input: HandbackInput, options?: LocaleOptions): Promise<HandbackItem<OperationKind<Ops>>[]>;
  /**
   * Whether `actor` may take `action` (default `approve`) on `proposal`, judged the way the engine
   * judges the decision itself: tenant, approver role, the operation's `authorize`, the frozen
   * policy's roles, separation of duties, an earlier approval toward a quorum. A console shows a
   * decision's button exactly when this is `allowed`, and shows the reason when it is not.
   */
  mayDecide(actor: Actor, proposal: Proposal, action?: DecisionAction): DecisionRight;
  /**
   * After an operator was disabled, demoted or moved: withdraws every approval of the tenant's
   * pending proposals whose approver may no longer decide (asked of `approverDirectory`), audited
   * `approval_withdrawn` by `by`. An approval completing a quorum does the same for its proposal.
   */
  withdrawLapsedApprovals(input: { readonly tenant: string; readonly by: string }): Promise<WithdrawResult>;
}

/** `engine.grants`: bounded approvals an admin delegates to an agent. */
export interface EngineGrants<Ops extends Operations = Operations> {
  /** Delegates a bounded policy to an agent (admin only). Never created from a proposal's card. */
  create<K extends OperationKind<Ops>>(input: GrantInputOf<Ops, K>): Promise<GrantResult>;
  /** Revokes a grant (admin only). */
  revoke(input: { tenant: string; grantId: string; actor: Actor }): Promise<RevokeResult>;
  /** A tenant's grants with their usage. */
  list(tenant: string, query?: { subject?: string; limit?: number }): Promise<Grant[]>;
  /** One grant of the tenant by id, with its usage; undefined when the tenant has none by that id. */
  get(tenant: string, grantId: string): Promise<Grant | undefined>;
}

/**
 * `engine.routes`: a tenant's routes. A new proposal is given the first route (in `position`
 * order) that matches it; then only that route's group may decide it (`forbidden` for anyone
 * else, on every path), sees it in "Needs you" and is notified of it. Unrouted proposals go to
 * every approver. Changes are made by an admin of the tenant, audited `route_changed`, and never
 * re-route pending proposals.
 */
export interface EngineRoutes {
  /** The tenant's routes, in the order they are tried. */
  list(tenant: string): Promise<Route[]>;
  /** Creates a route, or replaces the one with `id`. */
  save(input: {
    readonly tenant: string;
    readonly id?: string;
    readonly route: RouteInput;
    readonly actor: Actor;
  }): Promise<SaveRouteResult>;
  delete(input: {
    readonly tenant: string;
    readonly id: string;
    readonly actor: Actor;
  }): Promise<DeleteRoutingResult>;
}

/** `engine.groups`: a tenant's groups of approvers (admin-managed, audited `group_changed`). */
export interface EngineGroups {
  list(tenant: string): Promise<Group[]>;
  /** Creates a group or replaces its members (principal ids, e.g. `user:ana@acme.test`). */
  save(input: {
    readonly tenant: string;
    readonly name: string;
    readonly members: readonly string[];
    readonly actor: Actor;
  }): Promise<SaveGroupResult>;
  /** Deletes a group no route names. */
  delete(input: {
    readonly tenant: string;
    readonly name: string;
    readonly actor: Actor;
  }): Promise<DeleteRoutingResult>;
}

/** `engine.audit`: the hash-chained audit events, per proposal and per tenant. */
export interface EngineAudit {
  /** Every audit event of a proposal, in chain order (all of them: views should page or use {@link timeline}). */
  events(tenant: string, proposalId: string): Promise<AuditLine[]>;
  /**
   * One page of a proposal's audit events, in chain order, by an opaque cursor.
   *
   * @throws {ConfigurationError} on a cursor this engine did not return (`isAuditCursor` checks).
   */
  page(tenant: string, proposalId: string, input?: AuditPageInput): Promise<AuditPage>;
  /**
   * A tenant's audit events after `afterSeq` (every proposal, chain order) and where to read next:
   * the live event feed polls it. Without `afterSeq`, from the head.
   */
  since(tenant: string, input?: AuditSinceInput): Promise<AuditSince>;
  /** A proposal's audit events for an operator: every decision, repeated refusals collapsed. */
  timeline(tenant: string, proposalId: string): Promise<ProposalTimeline>;
}

/** `engine.reads`: the read tools a model may call, with server-owned scope. */
export interface EngineReads {
  /**
   * Runs a read tool for the binding's tenant, section, agent and run (never the model's): input
   * parsed strictly (`invalid_request`), the call audited as `read` in the tenant's chain.
   */
  run(tool: string, input: unknown, binding: ReadBinding): Promise<ReadResult>;
}

/** `engine.sweeps`: what a server runs on a timer or at shutdown: expiry, recovery, automatic reconciliation. */
export interface EngineSweeps {
  /**
   * The automatic reconciliation: runs `reconcile` (audited as `system:reconciliation`) for every
   * `needs_reconciliation` proposal whose next try on the backoff (`reconcileBackoff`) is due. Safe
   * in every instance at once; `countersign serve` calls it from its sweep.
   */
  reconcileDue(options?: { readonly limit?: number }): Promise<ReconcileDueSummary>;
  /** Takes over attempts whose lease ended: re-runs what never ran, sends the rest to reconciliation. */
  recover(options?: RecoverOptions): Promise<RecoverySummary>;
  /** Expires pending proposals past their expiry; returns how many. */
  expireDue(): Promise<number>;
  /**
   * Escalates every pending proposal whose route's escalation time has come (once, audited
   * `escalated`): its escalation group may decide it from then on and is notified. Returns how many.
   */
  escalateDue(options?: { readonly limit?: number }): Promise<number>;
  /**
   * Reminds the approvers of every pending proposal expiring within `beforeExpiryMs` (once per
   * proposal, audited `reminded`, notified through the outbox). Returns how many.
   */
  remindDue(options: { readonly beforeExpiryMs: number; readonly limit?: number }): Promise<number>;
  /** Expires pending proposals of an operation below a scope version (`unsupported_scope_version`). */
  expireVersion(input: ExpireVersionInput): Promise<{ expired: number; tenants: Record<string, number> }>;
  /**
   * For a graceful shutdown, after in-flight requests drained: hands back the attempts this engine
   * is executing that have not recorded their command or begun their local effect. Their leases
   * end now, so another server's next sweep takes them over instead of after the whole lease; each
   * stops at its next step. Attempts already sending finish where they are. Returns how many were
   * handed back; after it, this engine executes nothing new.
   *
   * @example
   * process.once('SIGTERM', async () => { await server.close(); await engine.sweeps.releaseLeases(); await engine.close(); });
   */
  releaseLeases(): Promise<number>;
}

/**
 * Creates an engine: registers operations, migrates the store, and wires the lifecycle steps.
 *
 * @example
 * const engine = await createEngine({ store: sqliteStore({ path: 'app.db' }), operations: [payInvoice] });
 * const proposed = await engine.proposals.propose({ operation: 'invoice.pay', request: { invoice_id: 'inv-104' },
 *   tenant: 'acme', resource: 'invoice:inv-104', requestedBy: 'agent:support', runId });
 */
export async function createEngine<Ops extends Operations>(
  options: EngineOptions<Ops>,
): Promise<Engine<readonly Ops[number][]>> {
  const operations = new Map<string, AnyOperation>();
  for (const operation of options.operations) {
    if (operations.has(operation.kind))
      throw new ConfigurationError(`operations: "${operation.kind}" is registered twice`);
    operations.set(operation.kind, operation);
  }
  const readTools = new Map<string, AnyReadTool>();
  for (const tool of options.readTools ?? []) {
    if (readTools.has(tool.name))
      throw new ConfigurationError(`readTools: "${tool.name}" is registered twice`);
    readTools.set(tool.name, tool);
  }
  if (options.sealKey !== undefined && Buffer.byteLength(options.sealKey as string) < MIN_SEAL_KEY_BYTES) {
    throw new ConfigurationError(`sealKey: must be at least ${MIN_SEAL_KEY_BYTES} bytes`);
  }
  const chainer = auditChainer(options.sealKey);
  const ctx: EngineContext = Object.freeze({
    store: options.store,
    ledger: new AuditLedger(options.store, chainer),
    operations,
    clock: options.clock ?? { now: () => Date.now() },
    logger: options.logger ?? silentLogger,
    sealKey: options.sealKey,
    chainer,
    approverRoles: options.approverRoles ?? ['approver', 'admin'],
    leaseMs: options.leaseMs ?? 5 * 60_000,
    sweepIntervalMs: options.sweepIntervalMs,
    reconcileBackoff: checkedBackoff(options.reconcileBackoff),
    allowEditorApproval: options.allowEditorApproval ?? false,
    approverDirectory: options.approverDirectory,
    observers: options.observers ?? [],
    stepWriters: options.stepWriters ?? [],
    running: new RunningAttempts(),
    auditBudget: new AuditBudget(resolveAuditedLimits(options.auditedLimits)),
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
  const engine = Object.freeze({
    operations,
    readTools,
    approverRoles: ctx.approverRoles,
    allowEditorApproval: ctx.allowEditorApproval,
    limits: quota.limits,
    proposals: Object.freeze({
      propose: (input: ProposeInput) => quota.admit(input, () => propose(ctx, input, executeOptions)),
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
      get: (tenant: string, id: string) => getProposal(ctx, tenant, id),
      list: (tenant: string, input?: ListInput) =>
        input?.decidableBy ? listNeeding(ctx, tenant, input) : listProposals(ctx, tenant, input),
      count: (tenant: string, input?: CountInput) =>
        input?.decidableBy ? countNeeding(ctx, tenant, input) : countListed(ctx, tenant, input),
      related: (proposal: Proposal) => relatedProposals(ctx, proposal),
      handback: (input: HandbackInput, localeOptions?: LocaleOptions) => handback(ctx, input, localeOptions),
      mayDecide: (actor: Actor, proposal: Proposal, action: DecisionAction = 'approve') =>
        decisionRight(ctx, actor, factsOf(proposal), action),
      withdrawLapsedApprovals: (input: { readonly tenant: string; readonly by: string }) =>
        withdrawLapsedApprovals(ctx, input),
    }),
    grants: Object.freeze({
      create: (input: GrantInput) => grant(ctx, input),
      revoke: (input: { tenant: string; grantId: string; actor: Actor }) => revoke(ctx, input),
      list: (tenant: string, query?: { subject?: string; limit?: number }) => listGrants(ctx, tenant, query),
      get: (tenant: string, grantId: string) => getGrant(ctx, tenant, grantId),
    }),
    routes: Object.freeze({
      list: (tenant: string) => listRoutes(ctx, tenant),
      save: (input: { tenant: string; id?: string; route: RouteInput; actor: Actor }) =>
        saveRoute(ctx, input),
      delete: (input: { tenant: string; id: string; actor: Actor }) => deleteRoute(ctx, input),
    }),
    groups: Object.freeze({
      list: (tenant: string) => listGroups(ctx, tenant),
      save: (input: { tenant: string; name: string; members: readonly string[]; actor: Actor }) =>
        saveGroup(ctx, input),
      delete: (input: { tenant: string; name: string; actor: Actor }) => deleteGroup(ctx, input),
    }),
    audit: Object.freeze({
      events: (tenant: string, id: string) => proposalAudit(ctx, tenant, id),
      page: (tenant: string, id: string, input?: AuditPageInput) => proposalAuditPage(ctx, tenant, id, input),
      since: (tenant: string, input?: AuditSinceInput) => tenantAuditSince(ctx, tenant, input),
      timeline: (tenant: string, id: string) => proposalTimeline(ctx, tenant, id),
    }),
    reads: Object.freeze({
      run: (tool: string, input: unknown, binding: ReadBinding) =>
        read(ctx, readTools, { name: tool, input }, binding),
    }),
    sweeps: Object.freeze({
      reconcileDue: (dueOptions?: { readonly limit?: number }) => reconcileDue(ctx, dueOptions),
      recover: (recoverOptions?: RecoverOptions) => recover(ctx, { ...recoverOptions, ...executeOptions }),
      expireDue: () => expireDue(ctx),
      escalateDue: (escalateOptions?: { readonly limit?: number }) => escalateDue(ctx, escalateOptions),
      remindDue: (remindOptions: { readonly beforeExpiryMs: number; readonly limit?: number }) =>
        remindDue(ctx, remindOptions),
      expireVersion: (input: ExpireVersionInput) => expireVersion(ctx, input),
      releaseLeases: () => releaseLeases(ctx),
    }),
    close: () => options.store.close(),
  });
  // The one place the types meet the values: every call still parses through the operation's own
  // schemas at run time; the typed view only states what the registered operations produce.
  return engine as unknown as Engine<readonly Ops[number][]>;
}

function checkedBackoff(backoff: ReconcileBackoff | undefined): ReconcileBackoff {
  if (!backoff) return DEFAULT_RECONCILE_BACKOFF;
  const { firstMs, maxMs } = backoff;
  if (!Number.isSafeInteger(firstMs) || firstMs < 1 || !Number.isSafeInteger(maxMs) || maxMs < firstMs)
    throw new ConfigurationError(
      'reconcileBackoff: firstMs must be a whole number of milliseconds above 0, and maxMs at least firstMs',
    );
  return Object.freeze({ firstMs, maxMs });
}
