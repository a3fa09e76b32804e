export {
  AUDIT_STEPS,
  type AuditDigests,
  type AuditEvent,
  type AuditEventDraft,
  type AuditStep,
  type ChainHead,
} from './event.js';
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
