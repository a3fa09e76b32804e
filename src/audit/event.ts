/** Every step the audit trail records, as a list (API filters check against it). */
export const AUDIT_STEPS = Object.freeze([
  'proposed',
  'edited',
  'approved',
  'partially_approved',
  'approval_withdrawn',
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
  'operator_changed',
  'route_changed',
  'group_changed',
  'escalated',
  'reminded',
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

/**
 * An event with its id, appended but not chained yet: no place in its tenant's chain, no hashes.
 * What a step writes inside its transaction (see `AuditAppender.append` in `src/ledger/`); observers,
 * exports and readers never see one, only the {@link ChainedAuditEvent} it becomes.
 */
export interface PendingAuditEvent extends AuditEventDraft {
  readonly id: string;
}

/** The earlier name of {@link PendingAuditEvent}, kept for existing callers. */
export type QueuedAuditEvent = PendingAuditEvent;

/** An appended, chained audit event. `seq` counts from 1 per tenant. */
export interface ChainedAuditEvent extends PendingAuditEvent {
  readonly seq: number;
  readonly leafHash: string;
  readonly chainHash: string;
  readonly seal: string | null;
}

/** A chained audit event: every event a reader, an export or an observer is given. */
export type AuditEvent = ChainedAuditEvent;

/** The head of one tenant's chain. */
export interface ChainHead {
  readonly seq: number;
  readonly chainHash: string;
}
