import type { Outcome } from '../operation/outcome.js';
import type { AttemptStatus, ProposalStatus } from '../records/status.js';

export type { AttemptStatus, ProposalStatus };

/** Every proposal status, in lifecycle order. */
export const PROPOSAL_STATUSES: readonly ProposalStatus[] = [
  'pending',
  'executing',
  'succeeded',
  'needs_reconciliation',
  'revision_required',
  'terminal_failure',
  'declined',
  'superseded',
  'expired',
];

/** Statuses a proposal never leaves. */
export const FINAL_STATUSES: readonly ProposalStatus[] = [
  'succeeded',
  'revision_required',
  'terminal_failure',
  'declined',
  'superseded',
  'expired',
];

/**
 * The stored proposal format this code writes. Older formats keep their fixtures forever.
 * Format 2 adds `editedBy` and binds `section`, `requestedBy` and `editedBy` into the contract digest.
 * Format 3 adds `policyJson`, the approval policy resolved when the proposal was made, also bound
 * into the digest: a later change of the operation's policy never changes what it needs.
 */
export const PROPOSAL_FORMAT_VERSION = 3;

/**
 * The durable proposal, as a store persists it. JSON parts are stored as canonical JSON text so
 * digests can be recomputed from exactly what is stored.
 */
export interface ProposalRecord {
  readonly formatVersion: number;
  readonly tenant: string;
  readonly id: string;
  readonly runId: string;
  readonly section: string | null;
  readonly resource: string;
  readonly requestedBy: string;
  /**
   * The operator whose edit produced this proposal (format 2), else null. Like the proposer, the
   * editor never approves it unless the operation or server explicitly allows it.
   */
  readonly editedBy: string | null;
  /**
   * Canonical JSON of the frozen approval policy `{"required":n,"roles":[…]}` (format 3), else
   * null: formats 1 and 2 need one approval from any approver.
   */
  readonly policyJson: string | null;
  readonly operation: string;
  readonly scopeVersion: number;
  readonly viewVersion: number;
  /** Canonical JSON of the model's parsed request (kept for edits). */
  readonly requestJson: string;
  readonly argumentsJson: string;
  readonly scopeJson: string;
  readonly scopeDigest: string;
  readonly previewJson: string;
  /** The contract digest: what a human sees, approves and what every log line shortens. */
  readonly digest: string;
  /** HMAC-SHA-256 over the contract with the server key, or null without a key. */
  readonly seal: string | null;
  readonly status: ProposalStatus;
  readonly createdAt: number;
  readonly expiresAt: number;
  readonly supersedes: string | null;
  readonly supersededBy: string | null;
  readonly decidedBy: string | null;
  readonly decidedAt: number | null;
  /** `exact` for a human approval of this digest; `grant` when a grant approved it. */
  readonly approvalKind: 'exact' | 'grant' | null;
  readonly grantId: string | null;
  /** Declined/expired note or the reason an edit gave. */
  readonly decisionNote: string | null;
  readonly currentAttempt: number;
  readonly outcomeJson: string | null;
  readonly updatedAt: number;
}

/** Fields of a proposal that change after it is created. */
export type ProposalPatch = Partial<
  Pick<
    ProposalRecord,
    | 'status'
    | 'supersededBy'
    | 'decidedBy'
    | 'decidedAt'
    | 'approvalKind'
    | 'grantId'
    | 'decisionNote'
    | 'currentAttempt'
    | 'outcomeJson'
    | 'updatedAt'
  >
>;

/** One claimed execution of an approved proposal. */
export interface AttemptRecord {
  readonly tenant: string;
  readonly id: string;
  readonly proposalId: string;
  readonly number: number;
  readonly idempotencyKey: string;
  readonly status: AttemptStatus;
  /**
   * For an `executing` attempt, when its lease ends (a recovery sweep may then take it over); for a
   * `needs_reconciliation` one, when the automatic reconciliation next asks the provider.
   */
  readonly leaseUntil: number;
  readonly commandId: string | null;
  readonly startedAt: number;
  readonly finishedAt: number | null;
}

/** One human approval of a proposal that needs several (quorum): bound to the digest approved. */
export interface ApprovalRecord {
  readonly tenant: string;
  readonly proposalId: string;
  /** The approving operator's principal id; one approval per person per proposal. */
  readonly approver: string;
  readonly digest: string;
  readonly at: number;
  /**
   * HMAC-SHA-256 of the approval with the server's seal key, or null without a key: a row someone
   * wrote into the database without the key never counts toward a quorum.
   */
  readonly seal: string | null;
}

/** Fields of an attempt that change. */
export type AttemptPatch = Partial<Pick<AttemptRecord, 'status' | 'leaseUntil' | 'commandId' | 'finishedAt'>>;

/**
 * A bounded approval: an admin lets one agent principal's proposals of some operations, on one
 * resource boundary, within typed constraints and optional cumulative caps, execute without a
 * click until it expires or is revoked.
 */
export interface GrantRecord {
  readonly tenant: string;
  readonly id: string;
  /** The agent principal whose proposals the grant approves. */
  readonly subject: string;
  /** Canonical JSON array of operation kinds. */
  readonly operationsJson: string;
  /** The exact resource the grant is bounded to, or a prefix ending in `*`. */
  readonly resource: string;
  /** Canonical JSON of the constraints by scope field. */
  readonly constraintsJson: string;
  /** The numeric scope field a cumulative cap sums (e.g. `amount_minor`). */
  readonly capField: string | null;
  readonly capTotal: number | null;
  readonly capUses: number | null;
  readonly usedCount: number;
  readonly usedTotal: number;
  readonly expiresAt: number;
  readonly createdAt: number;
  readonly createdBy: string;
  readonly revokedAt: number | null;
  readonly revokedBy: string | null;
  readonly note: string | null;
  /**
   * Retired: grants made before it was withdrawn may hold true. It is kept because the seal covers
   * it, and never honored: a grant approves no proposal whose policy needs more than one approval.
   * New grants store false.
   */
  readonly satisfiesQuorum: boolean;
  /**
   * HMAC-SHA-256 of every other field with the server's seal key (see `grantSealed`), or null
   * without a key. Written again by each spend and revocation; with a key, a grant whose seal does
   * not verify approves nothing (`corrupt_approval_record`).
   */
  readonly seal: string | null;
}

/** Re-export for stores that persist outcomes. */
export type { Outcome };

/**
 * A group: a tenant's named set of approvers a route sends proposals to. `members` are principal
 * ids (an operator of the console is `user:<email>`), sorted.
 */
export interface GroupRecord {
  readonly tenant: string;
  readonly name: string;
  readonly members: readonly string[];
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * A route: a tenant's rule sending an operation's proposals (optionally only above an amount, or
 * only for a resource pattern) to a group and a channel, with an optional escalation. Routes are
 * tried in `position` order (then id); the first that matches a new proposal is its route.
 */
export interface RouteRecord {
  readonly tenant: string;
  readonly id: string;
  readonly name: string;
  readonly position: number;
  readonly operation: string;
  /** A resource (`invoice:inv-1`) or a `prefix*` pattern (`invoice:*`); null for any resource. */
  readonly resource: string | null;
  /** The scope field holding an amount in minor units (`amount_minor`); null for any amount. */
  readonly amountField: string | null;
  /** With `amountField`: the route matches amounts strictly above this many minor units. */
  readonly above: number | null;
  readonly group: string;
  readonly channel: string | null;
  /** After this long undecided, the proposal is escalated to `escalationGroup`; null: never. */
  readonly escalateAfterMs: number | null;
  readonly escalationGroup: string | null;
  readonly escalationChannel: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

/**
 * The route a proposal was given when it was created, copied from the route then (changing the
 * route later never re-routes it), and whether it was escalated.
 */
export interface ProposalRouteRecord {
  readonly tenant: string;
  readonly proposalId: string;
  readonly routeId: string;
  readonly routeName: string;
  readonly group: string;
  readonly channel: string | null;
  readonly escalateAt: number | null;
  readonly escalationGroup: string | null;
  readonly escalationChannel: string | null;
  readonly escalatedAt: number | null;
}
