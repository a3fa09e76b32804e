/** Every step the audit trail records, as a list (API filters check against it). */
export const AUDIT_STEPS = Object.freeze([
  'proposed',
  'edited',
  'approved',
  'partially_approved',
  'declined',
  'expired',
  'claimed',
  'revalidated',
  'command',
  'outcome',
  'replayed',
  'denied',
  'reconciled',
  'shadow_mismatch',
  'granted',
  'revoked',
  'read',
] as const);

/** Every step the audit trail records. */
export type AuditStep = (typeof AUDIT_STEPS)[number];

/** The digests one event speaks of (full SHA-256 hex). */
export interface AuditDigests {
  readonly proposed?: string;
  readonly seen?: string;
  readonly approved?: string;
  readonly requested?: string;
}

/** What the engine says about one step, before it is chained. */
export interface AuditEventDraft {
  readonly tenant: string;
  readonly proposalId: string;
  readonly attemptId: string | null;
  readonly runId: string;
  readonly step: AuditStep;
  readonly actor: string;
  readonly reason: string | null;
  readonly digests: AuditDigests;
  readonly commandId: string | null;
  /** Small, safe, redacted facts (a diff's lines, a grant id, an outcome kind). */
  readonly detail: Readonly<Record<string, unknown>>;
  readonly at: number;
}

/** An event with its id, ready to be chained (or queued to be chained, see `Store`). */
export interface QueuedAuditEvent extends AuditEventDraft {
  readonly id: string;
}

/** An appended, chained audit event. `seq` counts from 1 per tenant. */
export interface AuditEvent extends QueuedAuditEvent {
  readonly seq: number;
  readonly leafHash: string;
  readonly chainHash: string;
  readonly seal: string | null;
}

/** The head of one tenant's chain. */
export interface ChainHead {
  readonly seq: number;
  readonly chainHash: string;
}
