/**
 * `countersign/store`: what a third-party store implements. A backend implements {@link Store}
 * (transactions, reads, migrations) over the records below, and proves itself with the shared
 * conformance suite in `countersign/testing`: `storeConformance(makeStore)` returns the cases every
 * backend must pass — the SQLite and PostgreSQL stores run the same ones.
 *
 * @example
 * import type { Store } from 'countersign/store';
 * import { storeConformance } from 'countersign/testing';
 * for (const c of storeConformance(() => new MyStore())) it(c.name, c.run);
 *
 * @packageDocumentation
 */
export type {
  AuditQuery,
  GrantHistory,
  GrantQuery,
  ProposalCountQuery,
  ProposalCounts,
  ProposalFilter,
  ProposalQuery,
  ProposalSort,
  QueuedAuditRow,
  Store,
  StoreCapabilities,
  StoreHealth,
  StoreReader,
  StoreTransaction,
  AuditHeadState,
  ChainedBatch,
  QueuedAuditEntry,
} from './store.js';
export {
  type ApprovalRecord,
  type AttemptPatch,
  type AttemptRecord,
  type AttemptStatus,
  FINAL_STATUSES,
  type GrantRecord,
  type GroupRecord,
  PROPOSAL_FORMAT_VERSION,
  PROPOSAL_STATUSES,
  type ProposalPatch,
  type ProposalRecord,
  type ProposalRouteRecord,
  type ProposalStatus,
  type RouteRecord,
} from './records.js';
export type { Outcome } from '../operation/outcome.js';
export type { LocalTransaction } from '../operation/define-operation.js';
export { type RenderedSql, type SqlDialect, SqlQuery, sql } from '../sql/sql.js';
export {
  AUDIT_STEPS,
  type AuditDigests,
  type AuditEvent,
  type AuditEventDraft,
  type AuditStep,
  type ChainHead,
  type ChainedAuditEvent,
  type PendingAuditEvent,
  type QueuedAuditEvent,
} from '../audit/event.js';
export { type AuditChainer, auditChainer } from '../audit/chain.js';
export {
  CorruptAuditChainError,
  StoreClosedError,
  StoredFormatError,
  StoreFaultError,
  type StoreFaultCondition,
  StoreUnavailableError,
  UnstorableValueError,
} from './errors.js';
