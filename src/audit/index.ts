export { chainEvent, GENESIS, leafHash, linkHash } from './chain.js';
export type { AuditDigests, AuditEvent, AuditEventDraft, AuditStep, ChainHead } from './event.js';
export { type AuditProblem, type AuditVerification, verifyAudit, verifyEvents } from './verify.js';
