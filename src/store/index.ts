/**
 * `countersign/store`: what a third-party store implements. A backend implements {@link Store}
 * (transactions, reads, migrations) over the records below, and proves itself with the shared
 * conformance suite: `storeConformance(makeStore)` (here, and in `countersign/testing`) returns the
 * cases every backend must pass — the SQLite and PostgreSQL stores run the same ones.
 *
 * @example
 * import { type Store, storeConformance } from 'countersign/store';
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
  TransactionOptions,
} from './store.js';
export {
  type ApprovalRecord,
  type AttemptPatch,
  type AttemptRecord,
  type AttemptStatus,
  FINAL_STATUSES,
  type GrantRecord,
  PROPOSAL_FORMAT_VERSION,
  PROPOSAL_STATUSES,
  type ProposalPatch,
  type ProposalRecord,
  type ProposalStatus,
} from './records.js';
export type { Outcome } from '../operation/outcome.js';
export type { LocalTransaction } from '../operation/define-operation.js';
export { type RenderedSql, type SqlDialect, SqlQuery, sql } from './sql/sql.js';
export {
  AUDIT_STEPS,
  type AuditDigests,
  type AuditEvent,
  type AuditEventDraft,
  type AuditStep,
  type ChainHead,
  type QueuedAuditEvent,
} from '../audit/event.js';
export { type AuditChainer, auditChainer } from '../audit/chain.js';
export { CorruptAuditChainError, StoreClosedError, StoreUnavailableError } from './store-errors.js';
export { StoreFaultError, type StoreFaultCondition } from './store-fault.js';
export { type ConformanceCase, sampleProposal, storeConformance } from '../testing/store-conformance.js';
