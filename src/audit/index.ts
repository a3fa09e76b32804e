export { chainEvent, GENESIS, leafHash, linkHash } from './chain.js';
export type { AuditDigests, AuditEvent, AuditEventDraft, AuditStep, ChainHead } from './event.js';
export { type AuditProblem, type AuditVerification, verifyAudit, verifyEvents } from './verify.js';
export {
  type DigestPair,
  type ExportIncidentOptions,
  type ExportIncidentResult,
  type ExternalEffect,
  exportIncident,
  type IncidentBundle,
  type IncidentEvent,
  type RequestedScope,
} from './export.js';
