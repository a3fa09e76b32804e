/**
 * countersign: the agent proposes, the application turns the proposal into a contract, a human
 * approves the contract, the application executes it — exactly once, exactly as approved.
 *
 * @packageDocumentation
 */

// Canonical JSON, digests, seals and freezing.
export * from './canonical/index.js';
// Operations: definition, scope, authorization of a requested action.
export * from './operation/index.js';
// The lifecycle engine.
export * from './engine/index.js';
// Locales: catalogs, Accept-Language negotiation, money and dates through Intl.
export {
  type Catalog,
  CATALOGS,
  formatDateIn,
  formatMoneyIn,
  type Language,
  LANGUAGES,
  type LanguageRange,
  type LocaleOptions,
  type Localizer,
  localizer,
  type MessageKey,
  type MessageParams,
  negotiateLocale,
  type PerLocale,
  parseAcceptLanguage,
  type ResolvedLocale,
  resolveLocale,
  translate,
} from './i18n/index.js';
// Bounded approvals.
export * from './grants/index.js';
// The audit trail.
export * from './audit/index.js';
// The store interface (backends live at `countersign/sqlite`, …).
export type {
  ProposalCountQuery,
  ProposalCounts,
  AuditQuery,
  ProposalFilter,
  ProposalQuery,
  ProposalSort,
  Store,
  StoreCapabilities,
  StoreTransaction,
} from './store/store.js';
export {
  type AttemptRecord,
  type AttemptStatus,
  type GrantRecord,
  FINAL_STATUSES,
  PROPOSAL_STATUSES,
  PROPOSAL_FORMAT_VERSION,
  type ProposalRecord,
  type ProposalStatus,
} from './store/records.js';
