export type { Actor } from './actor.js';
export {
  type ApprovedScope,
  authorizeExecution,
  type ExecutionDecision,
  type ExecutionDenialReason,
} from './authorize-execution.js';
export {
  type AnyOperation,
  type ApprovalPolicy,
  type CommandMeta,
  type DefiniteFailure,
  defineOperation,
  type Effect,
  type ExecuteContext,
  type FrozenApprovalPolicy,
  type LocalTransaction,
  type Operation,
  type OperationDefinition,
  OperationDefinitionError,
  type PrepareContext,
  type Prepared,
  type ProposalFacts,
  type ProviderTraits,
  parseDuration,
  type ReconcileAttempt,
  type Reconciliation,
  type Rejection,
  type RevalidateContext,
  type Revalidation,
} from './define-operation.js';
export {
  type AnyReadTool,
  defineReadTool,
  isServerOwnedField,
  type ReadScope,
  type ReadTool,
  type ReadToolDefinition,
  SERVER_OWNED_FIELDS,
} from './define-read-tool.js';
export { currencyCode, minorUnits, moneyPreview } from './fields.js';
export type { HandbackFunction, HandbackText, WrittenHandback } from './localized-handback.js';
export { type ResultIdentifier, resultIdentifiers } from './result-identifiers.js';
export { formatIssues, type InputIssue, toInputIssues } from './issues.js';
export { formatMoney, type Money, money } from './money.js';
export type { Outcome, OutcomeKind } from './outcome.js';
export { type DenialReason, isReason, REASON_DESCRIPTIONS, REASONS, type Reason } from './reasons.js';
export { type BuiltScope, buildScope, type InvalidScope, normalizeSets } from './scope.js';
export {
  escapeHidden,
  findTextHazards,
  HIDDEN_KIND_LABEL,
  type HiddenKind,
  hasHidden,
  hiddenKind,
  type SuspiciousWord,
  splitHidden,
  suspiciousWords,
  type TextHazard,
  type TextPiece,
  withoutHidden,
} from './text-hazards.js';
