export type { ApproveInput, ApproveResult } from './approve.js';
export type { ExecutionContract } from './execution-contract.js';
export type { LifecycleObserver, StepFacts } from './audit-step.js';
export {
  type ApproveAndExecuteResult,
  createEngine,
  type Engine,
  type EngineKind,
  type EngineGroups,
  type EngineOptions,
  type EngineRoutes,
  type TypedEngine,
  type UntypedEngine,
} from './create-engine.js';
export type { CorruptAuditChain } from './corrupt-audit-chain.js';
export type { DeclineInput, DeclineResult } from './decline.js';
export type {
  DecisionAction,
  DecisionRefusalReason,
  DecisionRight,
} from './decision-right.js';
export type { EditInput, EditResult } from './edit.js';
export type { Clock, Logger } from './engine-context.js';
export { FencedAttemptError, OperationContractError } from './errors.js';
export type { ExpireVersionInput } from './expire-version.js';
export type { GrantDecision, GrantInput, GrantResult, RevokeResult } from './grants.js';
export type { InvalidRequest } from './freeze-proposal.js';
export {
  formatHandback,
  type HandbackInput,
  type HandbackItem,
  proposalHandback,
  writtenProposalHandback,
} from './handback.js';
export type {
  ArgumentsOf,
  ContractOf,
  OperationKind,
  OperationOf,
  Operations,
  OutcomeOf,
  PreviewOf,
  ProposalOf,
  RequestOf,
  ResultOf,
} from './operation-types.js';
export type { Proposal, ProposalApprovals } from './proposal.js';
export type { ProposeInput, ProposeResult } from './propose.js';
export type {
  DeleteRoutingResult,
  Group,
  Route,
  RouteInput,
  RoutingRefusal,
  SaveGroupResult,
  SaveRouteResult,
} from './route-admin.js';
export { type ProposalRoute, routeChannel } from './routing.js';
export {
  DEFAULT_PROPOSAL_LIMITS,
  type ProposalLimit,
  type ProposalLimits,
  type ProposalLimitsOption,
  type QuotaSubject,
  type RateLimited,
  type RateLimitKind,
} from './proposal-quota.js';
export {
  REPEATABLE_STEPS,
  type ProposalTimeline,
  type RepeatedEvents,
  type TimelineEntry,
} from './audit-timeline.js';
export { type RelatedProposals, SAME_SCOPE_LIMIT } from './related-proposals.js';
export {
  AUDIT_PAGE_MAX,
  type AuditLine,
  type AuditPage,
  type AuditPageInput,
  type AuditSince,
  type AuditSinceInput,
  isAuditCursor,
  type CountInput,
  type ListInput,
  type ProposalPage,
} from './queries.js';
export type { ReadBinding, ReadResult } from './read.js';
export type { ReconcileInput, ReconcileResult } from './reconcile.js';
export type { ReconcileBackoff, ReconcileDueSummary } from './reconcile-due.js';
export type { RecoverOptions, RecoverySummary } from './recover.js';
