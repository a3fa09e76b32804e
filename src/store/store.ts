import type { AuditEvent, AuditStep, ChainHead, PendingAuditEvent } from '../audit/event.js';
import type { LocalTransaction } from '../operation/define-operation.js';
import type {
  ApprovalRecord,
  AttemptPatch,
  AttemptRecord,
  AttemptStatus,
  GrantRecord,
  GroupRecord,
  ProposalPatch,
  ProposalRecord,
  ProposalRouteRecord,
  ProposalStatus,
  RouteRecord,
} from './records.js';

/**
 * The orders a list of proposals can take: `created` newest first (the default), `expires` the
 * least time left first, `amount` the largest preview `amount.minor` first (a preview without a
 * money `amount` sorts last). Each breaks ties by id, so pages are disjoint and complete.
 */
export type ProposalSort = 'created' | 'expires' | 'amount';

/** Which proposals a list or a count covers (every field narrows; all are parameters, never SQL text). */
export interface ProposalFilter {
  readonly status?: ProposalStatus | readonly ProposalStatus[];
  readonly runId?: string;
  readonly operation?: string;
  /** Only the proposals this principal made (an agent's own reads). */
  readonly requestedBy?: string;
  /**
   * Text an operator searches for: a proposal id (exact), a short hash or any longer prefix of the
   * contract digest, or words in the preview's `title` (case-insensitive for ASCII; `%` and `_` are
   * literal).
   */
  readonly search?: string;
  /** Only proposals last changed at or after this time (epoch ms): e.g. recently decided ones. */
  readonly updatedSince?: number;
  /** Only proposals acting on this resource (exact), e.g. `invoice:inv-104`. */
  readonly resource?: string;
  /** Only proposals with this scope digest (exact): the same authorization-relevant fields. */
  readonly scopeDigest?: string;
  /** Leave this proposal out (e.g. the one being reviewed, when looking for others like it). */
  readonly exceptId?: string;
}

/** How a query of proposals is narrowed and paged. Results are newest first unless `sort` says otherwise. */
export interface ProposalQuery extends ProposalFilter {
  readonly limit: number;
  readonly sort?: ProposalSort;
  /** Return proposals created before this (createdAt, id) position (the `created` order only). */
  readonly before?: { readonly createdAt: number; readonly id: string };
  /** Return proposals after this position in `sort`: the sort key of the last one seen and its id. */
  readonly after?: { readonly key: number; readonly id: string };
  /**
   * Return proposals created after this (createdAt, id) position, oldest first (the `created`
   * order only; it reverses that order): e.g. the first proposal made after another one.
   */
  readonly since?: { readonly createdAt: number; readonly id: string };
}

/** Which proposals {@link StoreTransaction.countProposals} counts: a tenant's, or one requester's. */
export interface ProposalCountQuery {
  /** Narrows to the proposals of one requesting principal (an agent). */
  readonly requestedBy?: string;
  /**
   * Also count the proposals (of any status) created at or after this time. Exact for a window
   * that starts at most two minutes before the tenant's newest proposal (a quota's is one minute):
   * the per-second counters behind this count are kept that long.
   */
  readonly createdSince: number;
  /**
   * Count as pending only proposals that have not expired at this time: one past its expiry no
   * longer waits for anyone, swept or not.
   */
  readonly pendingAt?: number;
  /**
   * Stop counting at this many: each count is at most `atMost`. A quota only needs to know whether
   * a limit is passed, so its cost stays bounded by the limit, not by the rows stored.
   */
  readonly atMost?: number;
  /**
   * An upper bound is enough: `created` may also count proposals made in the window's first
   * second before `createdSince` (never fewer than exactly), and `oldestCreatedAt` may be null. A
   * store answers it from its per-second counters alone; one that ignores it counts exactly. A
   * quota asks for the bound first and counts exactly only when the bound leaves no room.
   */
  readonly upperBound?: boolean;
}

/** What {@link StoreTransaction.countProposals} found: the figures proposal quotas are checked against. */
export interface ProposalCounts {
  /** Proposals still `pending` (awaiting a decision), at most `atMost`. */
  readonly pending: number;
  /** Proposals of any status created at or after `createdSince`, at most `atMost`. */
  readonly created: number;
  /** The earliest `createdAt` among those, or null when there are none. */
  readonly oldestCreatedAt: number | null;
}

/**
 * One page of a tenant's audit events, in chain order (ascending `seq`). Pages are keyed by
 * sequence, not offset: pass the last `seq` of a page as `afterSeq` for the next one, so pages stay
 * disjoint and complete while events are appended.
 */
export interface AuditQuery {
  /** Only this proposal's events. */
  readonly proposalId?: string;
  /** Only events with a greater `seq`. */
  readonly afterSeq?: number;
  /** At most this many events. */
  readonly limit: number;
  /** Only these steps (e.g. `['denied']`). An empty list matches nothing. */
  readonly steps?: readonly AuditStep[];
  /** Not these steps (e.g. `['denied']`: the decisions, however many refusals were recorded). */
  readonly exceptSteps?: readonly AuditStep[];
}

/** What differs between backends, named in one place. */
export interface StoreCapabilities {
  readonly name: string;
  /** True when several processes/servers may share the store (claims stay atomic across them). */
  readonly multiProcess: boolean;
  /**
   * True when `SELECT … FOR UPDATE SKIP LOCKED` works in a transaction's `local` SQL: concurrent
   * notification dispatchers then pass over each other's candidate rows instead of waiting on
   * them. Absent means false (claims still hold: each is a compare-and-set).
   */
  readonly skipLocked?: boolean;
}

/**
 * A store persists proposals, attempts and audit events. The engine never imports a backend; a
 * backend implements this interface in its own folder and passes the conformance suite in
 * `countersign/testing`.
 */
export interface Store {
  readonly capabilities: StoreCapabilities;
  /** Applies pending migrations. Safe to call on every start. */
  migrate(): Promise<void>;
  /**
   * Runs `fn` in one write transaction (SQLite: BEGIN IMMEDIATE; PostgreSQL: READ COMMITTED with
   * every state change a compare-and-set). Commits when `fn` resolves, rolls back when it throws.
   * A backend may run `fn` again after a deadlock or serialization failure, so `fn` must have no
   * effects outside the transaction.
   */
  transaction<T>(fn: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /**
   * Runs read-only `fn` without taking the write lock (SQLite: no BEGIN IMMEDIATE; PostgreSQL:
   * autocommit reads on one connection). Several reads are not one snapshot: decisions are always
   * taken inside `transaction` by compare-and-set.
   */
  read<T>(fn: (reader: StoreReader) => Promise<T>): Promise<T>;
  /**
   * Optional: work in this process that the store's reads should see finished, such as the
   * ledger's chaining after a commit whose caller went on (`src/ledger/`): each `read()` first
   * waits for what was handed in, for a second at most (that work may wait on another process), so
   * a process reads its own events chained; `close()` waits for all of it. `work` never rejects.
   */
  finishBeforeReads?(work: Promise<void>): void;
  /**
   * Optional: reaches the database with one cheap statement and says whether its schema is current
   * (what `GET /readyz` reports). Throws like any read when the database is unavailable. A store
   * without it is checked with an ordinary read.
   */
  health?(): Promise<StoreHealth>;
  /** Finishes in-flight transactions and closes the connection(s). */
  close(): Promise<void>;
}

/** What {@link Store.health} found. */
export interface StoreHealth {
  /** Migrations this code has that the database has not applied yet (0: the schema is current). */
  readonly pendingMigrations: number;
}

/** The read-only part of a store transaction. */
export type StoreReader = Pick<
  StoreTransaction,
  | 'getProposal'
  | 'listProposals'
  | 'listExpired'
  | 'countProposals'
  | 'countMatchingProposals'
  | 'getAttempt'
  | 'listAttempts'
  | 'listExpiredLeases'
  | 'listReconciliationDue'
  | 'getGrant'
  | 'listGrants'
  | 'listAudit'
  | 'auditHead'
  | 'auditTenants'
  | 'listQueuedAudit'
  | 'queuedAuditTenants'
  | 'getAuditEvents'
  | 'listApprovals'
  | 'listGroups'
  | 'listRoutes'
  | 'listProposalRoutes'
  | 'listEscalationDue'
  | 'listReminderDue'
>;

/** A grant's new seal, valid only if its usage is still what the engine read (`from`). */
export interface GrantStateSeal {
  readonly from: { readonly usedCount: number; readonly usedTotal: number };
  readonly seal: string;
}

/** Which grants {@link StoreTransaction.listGrants} returns (newest first). */
export interface GrantQuery {
  /** Only this agent principal's grants. */
  readonly subject?: string;
  readonly limit: number;
  /** Only grants created before this (createdAt, id) position: the last one of the page before. */
  readonly before?: { readonly createdAt: number; readonly id: string };
}

/** A grant row with what the audit records of its use (see {@link StoreTransaction.grantHistory}). */
export interface GrantHistory {
  readonly grant: GrantRecord;
  /** Audit events of approvals by this grant (`approved_by_grant`), chained or queued. */
  readonly approvals: number;
  /** True when the audit records this grant's revocation. */
  readonly revoked: boolean;
}

/** An audit event waiting to be chained, with the seal it was queued under. */
export interface QueuedAuditRow {
  readonly event: PendingAuditEvent;
  readonly seal: string | null;
}

/** A queued audit event as the ledger reads it to chain it. */
export interface QueuedAuditEntry extends QueuedAuditRow {
  /** Its place in the queue: events are chained in this order. */
  readonly n: number;
  /** True when the chain already holds an event with this id (a copy inserted again). */
  readonly replayed: boolean;
}

/** A tenant's chain head as a transaction took it (see {@link StoreTransaction.takeAuditHead}). */
export interface AuditHeadState {
  /** The head as stored; undefined before the tenant's first event. */
  readonly head: ChainHead | undefined;
  /** Whether events wait in the tenant's queue. */
  readonly waiting: boolean;
}

/** Chained events to write at the end of a tenant's chain, with what they move (see {@link StoreTransaction.writeChainedAudit}). */
export interface ChainedBatch {
  /** Linked in order onto the head the transaction took: the first at its `seq` + 1. */
  readonly events: readonly AuditEvent[];
  /** The head after the last of them. */
  readonly head: ChainHead;
  /** Queue places (`n`) these events came from, deleted in the same write. */
  readonly dequeue: readonly number[];
  /** Also read the queue again after the write, at most this many rows (what the write left). */
  readonly readNext?: number;
}

/** The operations available inside a store transaction. Every query names its tenant. */
export interface StoreTransaction {
  /** SQL for local effects that must commit with their outcome: the `sql` tag, or text in the backend's own dialect. */
  readonly local: LocalTransaction;
  insertProposal(record: ProposalRecord): Promise<void>;
  getProposal(tenant: string, id: string): Promise<ProposalRecord | undefined>;
  listProposals(tenant: string, query: ProposalQuery): Promise<ProposalRecord[]>;
  /**
   * Compare-and-set: applies `patch` only when the proposal is in `expectedStatus` (and, when
   * given, at `expectedAttempt`). Returns whether it applied. A pending proposal was never
   * attempted, so `pending` without an attempt means attempt 0: a finished row set back to
   * `pending` by hand cannot be claimed (and executed under a new idempotency key) again.
   */
  updateProposal(
    tenant: string,
    id: string,
    expected: { readonly status: ProposalStatus; readonly attempt?: number },
    patch: ProposalPatch,
  ): Promise<boolean>;
  /**
   * Counts a tenant's (or one requester's) pending proposals and those created since a time, for
   * proposal quotas. Bounded: the pending count by `atMost`, the created count by counters the
   * store keeps per second as it inserts proposals, never by the rows of the window or the table.
   */
  countProposals(tenant: string, query: ProposalCountQuery): Promise<ProposalCounts>;
  /** How many of a tenant's proposals match `filter` (every one, not a page): the console's tab counts. */
  countMatchingProposals(tenant: string, filter: ProposalFilter): Promise<number>;
  /** Pending proposals whose expiry is at or before `now`, across tenants, in no promised order. */
  listExpired(now: number, limit: number): Promise<{ tenant: string; id: string }[]>;
  insertAttempt(record: AttemptRecord): Promise<void>;
  getAttempt(tenant: string, id: string): Promise<AttemptRecord | undefined>;
  listAttempts(tenant: string, proposalId: string): Promise<AttemptRecord[]>;
  /**
   * Compare-and-set on an attempt's status (and, with `leaseBefore`, only while its lease ended
   * before that time: a recovery sweep never fences a worker that renewed its lease).
   */
  updateAttempt(
    tenant: string,
    id: string,
    expectedStatus: AttemptStatus,
    patch: AttemptPatch,
    expected?: { readonly leaseBefore?: number },
  ): Promise<boolean>;
  /** `executing` attempts whose lease ended before `now`, across tenants. */
  listExpiredLeases(now: number, limit: number): Promise<AttemptRecord[]>;
  /**
   * `needs_reconciliation` attempts whose next automatic reconciliation (their `leaseUntil`) is
   * before `now`, across tenants, the longest due first.
   */
  listReconciliationDue(now: number, limit: number): Promise<AttemptRecord[]>;
  insertGrant(record: GrantRecord): Promise<void>;
  getGrant(tenant: string, id: string): Promise<GrantRecord | undefined>;
  /**
   * A tenant's grants, newest first; `subject` narrows to one agent principal, `before` pages on
   * from the (createdAt, id) of the last grant of the previous page.
   */
  listGrants(tenant: string, query: GrantQuery): Promise<GrantRecord[]>;
  /**
   * A grant as stored now, with what the audit (chained or still queued) records of it: how many
   * grant approvals name it and whether its revocation was recorded. Where rows lock, the grant
   * row is locked first (until commit) and the audit read after, so no spend or revocation of it
   * commits between the two reads. Undefined when there is no such grant.
   */
  grantHistory(tenant: string, id: string): Promise<GrantHistory | undefined>;
  /**
   * Spends one use of a grant (and `amount` of its cumulative cap) as one compare-and-set: only
   * when it is not revoked, `now` is before its expiry and both caps still hold after the spend.
   * With `sealed`, also only while the usage is still `from`, and the row's seal becomes `seal`
   * (the engine's seal of the grant after this spend).
   */
  spendGrant(
    tenant: string,
    id: string,
    spend: { readonly amount: number; readonly now: number; readonly sealed?: GrantStateSeal },
  ): Promise<boolean>;
  /**
   * Revokes a live grant (compare-and-set on `revokedAt IS NULL`); with `sealed`, also only while
   * the usage is still `from`, and the row's seal becomes `seal`.
   */
  revokeGrant(
    tenant: string,
    id: string,
    revoke: { readonly by: string; readonly now: number; readonly sealed?: GrantStateSeal },
  ): Promise<boolean>;
  /**
   * Records one person's approval of a proposal that needs several. Returns false (and changes
   * nothing) when this approver already approved it.
   */
  insertApproval(record: ApprovalRecord): Promise<boolean>;
  /** The approvals recorded for one proposal, oldest first. */
  listApprovals(tenant: string, proposalId: string): Promise<ApprovalRecord[]>;
  /**
   * Removes one approver's approval of a proposal (withdrawn: the approver may no longer decide).
   * Returns whether a row was removed.
   */
  deleteApproval(tenant: string, proposalId: string, approver: string): Promise<boolean>;
  /** The approvals given to the tenant's pending proposals, by proposal, then oldest first. */
  listPendingApprovals(tenant: string): Promise<ApprovalRecord[]>;
  /** A tenant's groups, by name. */
  listGroups(tenant: string): Promise<GroupRecord[]>;
  /** Creates a group or replaces its members (by tenant and name). */
  putGroup(record: GroupRecord): Promise<void>;
  /** Deletes a group; returns whether it existed. */
  deleteGroup(tenant: string, name: string): Promise<boolean>;
  /** A tenant's routes in the order they are tried (position, then id). */
  listRoutes(tenant: string): Promise<RouteRecord[]>;
  /** Creates a route or replaces it (by tenant and id; its `createdAt` is kept). */
  putRoute(record: RouteRecord): Promise<void>;
  /** Deletes a route; returns whether it existed. */
  deleteRoute(tenant: string, id: string): Promise<boolean>;
  /** Records the route a new proposal was given. */
  insertProposalRoute(record: ProposalRouteRecord): Promise<void>;
  /** The recorded routes of some of a tenant's proposals (unrouted ones have none). */
  listProposalRoutes(tenant: string, proposalIds: readonly string[]): Promise<ProposalRouteRecord[]>;
  /** Pending, unexpired proposals whose route's escalation time is at or before `now` and not escalated yet, across tenants. */
  listEscalationDue(now: number, limit: number): Promise<{ tenant: string; id: string }[]>;
  /** Compare-and-set: marks a proposal's route escalated at `now`, only once; returns whether it applied. */
  markEscalated(tenant: string, proposalId: string, now: number): Promise<boolean>;
  /** Pending proposals expiring after `now` and at or before `until` that were not reminded yet, across tenants. */
  listReminderDue(now: number, until: number, limit: number): Promise<{ tenant: string; id: string }[]>;
  /** Records a proposal's one reminder; returns false (and changes nothing) when it was reminded already. */
  insertReminder(tenant: string, proposalId: string, now: number): Promise<boolean>;
  /**
   * Takes a tenant's chain head for this transaction, with whether events wait in its queue: the
   * ledger's (`src/ledger/`) first step to chain. Where rows lock, the head row stays locked until
   * the transaction ends: `wait` waits for another holder (and creates the row before the tenant's
   * first event), `pass` also lets the commit skip its WAL flush (what it writes was durable
   * already, in the queue), `skip` answers undefined at once when another transaction holds it or
   * it does not exist yet. Where the whole database is locked for writing, the head is read.
   */
  takeAuditHead(tenant: string, how: 'wait' | 'skip' | 'pass'): Promise<AuditHeadState | undefined>;
  /**
   * What waits in a tenant's queue, oldest first, at most `limit` rows, leaving out the places
   * `except` (the ones this transaction has just dequeued).
   */
  readAuditQueue(tenant: string, limit: number, except?: readonly number[]): Promise<QueuedAuditEntry[]>;
  /**
   * Writes chained events at the end of a tenant's chain, whose head this transaction took, with
   * the new head, and deletes the queue places they came from: one statement where the backend
   * can. An event whose place (`seq`) is already taken is skipped, not written, so `written` less
   * than the events given means the chain holds an event the ledger did not write there (the
   * ledger then throws and the transaction rolls back).
   */
  writeChainedAudit(
    tenant: string,
    batch: ChainedBatch,
  ): Promise<{ readonly written: number; readonly next: QueuedAuditEntry[] }>;
  /**
   * Queues events, with their seals, to be chained after this transaction commits. Throws
   * `CorruptAuditChainError` when a queued event's tenant has an event past its stored head (one
   * the ledger did not write), so the transaction rolls back before it commits.
   */
  enqueueAudit(rows: readonly QueuedAuditRow[]): Promise<void>;
  /** The chained events of a tenant with these ids (in no particular order; missing ones are left out). */
  getAuditEvents(tenant: string, ids: readonly string[]): Promise<AuditEvent[]>;
  /** Every tenant with events waiting in its queue. */
  queuedAuditTenants(): Promise<string[]>;
  /** A tenant's audit events still waiting to be chained, oldest first. */
  listQueuedAudit(tenant: string, limit: number): Promise<QueuedAuditRow[]>;
  /** One page of a tenant's events in chain order (see {@link AuditQuery}). */
  listAudit(tenant: string, query: AuditQuery): Promise<AuditEvent[]>;
  /** The head of a tenant's chain as stored. */
  auditHead(tenant: string): Promise<ChainHead | undefined>;
  /** Every tenant that has audit events. */
  auditTenants(): Promise<string[]>;
}
