export {
  AUDIT_STEPS,
  type AuditDigests,
  type AuditEvent,
  type AuditEventDraft,
  type AuditStep,
  type ChainHead,
  type ChainedAuditEvent,
  type PendingAuditEvent,
} from './event.js';
