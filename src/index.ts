/**
 * countersign: the agent proposes, the application turns the proposal into a contract, a human
 * approves the contract, the application executes it — exactly once, exactly as approved.
 *
 * The root entry holds what an application embedding the engine writes and names: operations and
 * their field helpers, the engine and the types of its results, the reason codes, the audit
 * trail's checks and the core errors. It loads nothing from the server, the adapters or the
 * testing kit. Every name is listed on purpose (scripts/public-api.json holds the list
 * `npm run check:exports` compares against); the rest has its own entry point: `countersign/store`
 * (what a store implements, `sql`), `countersign/canonical` (canonical JSON, seals, scope diffs),
 * the backends, `countersign/server`, `countersign/testing`, `countersign/observability` and the
 * adapters, each with its own errors.
 *
 * @packageDocumentation
 */

// Operations: what an application defines, and the helpers its definitions call.
export {
  type Actor,
  type AnyOperation,
  type AnyReadTool,
  currencyCode,
  defineOperation,
  defineReadTool,
  formatMoney,
  type HandbackText,
  minorUnits,
  type Money,
  money,
  moneyPreview,
  type Operation,
  type Outcome,
} from './operation/index.js';
export { hidden, last4 } from './canonical/index.js';

// The engine, and the types a caller names for its options and results.
export {
  type ApproveAndExecuteResult,
  type ApproveResult,
  type ContractOf,
  createEngine,
  type Engine,
  type EngineOptions,
  type ExecutionContract,
  formatHandback,
  type LifecycleObserver,
  type Logger,
  type OperationKind,
  type OutcomeOf,
  type PreviewOf,
  type Proposal,
  proposalHandback,
  type ProposalOf,
  type ProposeResult,
  type RequestOf,
  type ResultOf,
} from './engine/index.js';
export type { Store } from './store/store.js';
export type { ProposalStatus } from './store/records.js';

// Reason codes: every refusal names one.
export { isReason, REASON_DESCRIPTIONS, REASONS, type Reason } from './operation/index.js';

// The audit trail: digests, verification and the incident handoff.
export { digest, shortHash } from './canonical/index.js';
export type { AuditEvent } from './audit/index.js';
export { exportIncident, type IncidentBundle } from './ledger/incident-export.js';
export { type AuditVerification, verifyAudit } from './ledger/verify-audit.js';

// The core errors (each entry point exports its own).
export {
  CanonicalizationError,
  ConfigurationError,
  CountersignError,
  FencedAttemptError,
  OperationContractError,
  OperationDefinitionError,
  StoreFaultError,
  StoreUnavailableError,
  UnstorableValueError,
} from './errors.js';
