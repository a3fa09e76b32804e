import { DIRECTORY_TABLES } from './directory-tables.js';
import type { SqlMigration } from './sql-store.js';

/**
 * What a migration's DDL may differ in between dialects, and nothing else: each step of
 * {@link MIGRATIONS} is written once over these. Each backend declares its own (see
 * `src/store/sqlite/migrations.ts`, `src/store/postgres/migrations.ts`).
 */
export interface MigrationDialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * A key column's type: ordered and paged bytewise (`TEXT COLLATE "C"` on PostgreSQL, whose
   * default collation is the locale's; SQLite's `TEXT` already compares bytes).
   */
  readonly key: string;
  /** A 64-bit integer column (millisecond times, amounts): SQLite's `INTEGER` already is one. */
  readonly bigint: string;
  /** After a table's closing parenthesis: stored in its primary key's order (SQLite `WITHOUT ROWID`). */
  readonly clustered: string;
  /** A primary key numbered by the database in insertion order. */
  readonly serialKey: string;
  /** The current time in whole seconds since the epoch, as an integer expression. */
  readonly nowSeconds: string;
}

/** One step of the schema, written once: its statements for a dialect. */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly statements: (d: MigrationDialect) => readonly string[];
}

/** `statements` on one dialect only: the few places released migrations differ (see below). */
function on(d: MigrationDialect, name: MigrationDialect['name'], ...statements: string[]): string[] {
  return d.name === name ? statements : [];
}

// Definitions that released versions gave one dialect only, or the two at different versions;
// version 21 gives the last of them to the other dialect.
const PROPOSALS_BY_CREATED =
  'CREATE INDEX countersign_proposals_by_created ON countersign_proposals (tenant, created_at, id)';
const GRANTS_BY_CREATED =
  'CREATE INDEX countersign_grants_by_created ON countersign_grants (tenant, created_at, id)';
/** The proposals' columns on SQLite as versions 1–24 left them (in order), as version 25 copies them. */
export const SQLITE_PROPOSAL_COLUMNS_V24 = `  tenant TEXT NOT NULL, id TEXT NOT NULL, format_version INTEGER NOT NULL,
  run_id TEXT NOT NULL, section TEXT, resource TEXT NOT NULL, requested_by TEXT NOT NULL,
  operation TEXT NOT NULL, scope_version INTEGER NOT NULL, view_version INTEGER NOT NULL,
  request_json TEXT NOT NULL, arguments_json TEXT NOT NULL, scope_json TEXT NOT NULL,
  scope_digest TEXT NOT NULL, preview_json TEXT NOT NULL, digest TEXT NOT NULL, seal TEXT,
  status TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
  supersedes TEXT, superseded_by TEXT, decided_by TEXT, decided_at INTEGER, approval_kind TEXT,
  grant_id TEXT, decision_note TEXT, current_attempt INTEGER NOT NULL, outcome_json TEXT,
  updated_at INTEGER NOT NULL, edited_by TEXT, policy_json TEXT,`;
const PROPOSALS_BY_RUN =
  'CREATE INDEX countersign_proposals_by_run ON countersign_proposals (tenant, run_id, created_at, id)';
const PROPOSALS_BY_REQUESTER =
  'CREATE INDEX countersign_proposals_by_requester ON countersign_proposals (tenant, requested_by, created_at, id)';
const PROPOSALS_EXPIRY =
  "CREATE INDEX countersign_proposals_expiry ON countersign_proposals (expires_at) WHERE status = 'pending'";
const ATTEMPTS_LEASES =
  "CREATE INDEX countersign_attempts_leases ON countersign_attempts (lease_until) WHERE status = 'executing'";
const ATTEMPTS_IDEMPOTENCY_KEY =
  'CREATE UNIQUE INDEX countersign_attempts_idempotency_key ON countersign_attempts (idempotency_key)';

// Both dialects get the same tables, columns, keys and indexes (test/store/schema-parity.integration.test.ts
// compares them): TEXT for JSON (canonical text, never jsonb: digests are recomputed from exactly
// the stored bytes), `d.key` on columns that order or page, `d.bigint` for ms timestamps. The tenant
// leads every primary key and every per-tenant index, with three deliberate exceptions: a
// proposal's id and an attempt's idempotency key are unique across tenants (the proposal's id is
// its primary key since version 25; every lookup still names the tenant), and the lease sweep runs
// across tenants (a partial index over the attempts it looks for).
//
// Released versions are never edited, renumbered or reordered: a database migrated by one keeps
// it. Where a released version differed between the dialects, `on(d, …)` keeps what each ran.

/** The versioned schema migrations of every SQL store, in order. Never edit a released one: add the next. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'proposals, attempts, audit',
    statements: (d) => [
      `CREATE TABLE countersign_proposals (
  tenant ${d.key} NOT NULL, id ${d.key} NOT NULL, format_version INTEGER NOT NULL,
  run_id ${d.key} NOT NULL, section TEXT, resource TEXT NOT NULL, requested_by TEXT NOT NULL,
  operation ${d.key} NOT NULL, scope_version INTEGER NOT NULL, view_version INTEGER NOT NULL,
  request_json TEXT NOT NULL, arguments_json TEXT NOT NULL, scope_json TEXT NOT NULL,
  scope_digest TEXT NOT NULL, preview_json TEXT NOT NULL, digest TEXT NOT NULL, seal TEXT,
  status ${d.key} NOT NULL, created_at ${d.bigint} NOT NULL, expires_at ${d.bigint} NOT NULL,
  supersedes TEXT, superseded_by TEXT, decided_by TEXT, decided_at ${d.bigint}, approval_kind TEXT,
  grant_id TEXT, decision_note TEXT, current_attempt INTEGER NOT NULL, outcome_json TEXT,
  updated_at ${d.bigint} NOT NULL,
  PRIMARY KEY (tenant, id)
)${d.clustered}`,
      'CREATE UNIQUE INDEX countersign_proposals_public_id ON countersign_proposals (id)',
      'CREATE INDEX countersign_proposals_by_status ON countersign_proposals (tenant, status, created_at, id)',
      ...on(d, 'postgres', PROPOSALS_BY_CREATED),
      'CREATE INDEX countersign_proposals_by_run ON countersign_proposals (tenant, run_id, created_at)',
      ...on(d, 'postgres', PROPOSALS_EXPIRY),
      ...on(
        d,
        'sqlite',
        'CREATE INDEX countersign_proposals_expiry ON countersign_proposals (status, expires_at)',
      ),
      `CREATE TABLE countersign_attempts (
  tenant ${d.key} NOT NULL, id ${d.key} NOT NULL, proposal_id ${d.key} NOT NULL,
  number INTEGER NOT NULL, idempotency_key ${d.key} NOT NULL, status ${d.key} NOT NULL,
  lease_until ${d.bigint} NOT NULL, command_id TEXT, started_at ${d.bigint} NOT NULL, finished_at ${d.bigint},
  PRIMARY KEY (tenant, id),
  UNIQUE (tenant, proposal_id, number)${d.name === 'sqlite' ? ',\n  UNIQUE (idempotency_key)' : ''}
)${d.clustered}`,
      ...on(d, 'postgres', ATTEMPTS_IDEMPOTENCY_KEY, ATTEMPTS_LEASES),
      ...on(
        d,
        'sqlite',
        'CREATE INDEX countersign_attempts_leases ON countersign_attempts (status, lease_until)',
      ),
      `CREATE TABLE countersign_audit_events (
  tenant ${d.key} NOT NULL, seq ${d.bigint} NOT NULL, id TEXT NOT NULL, proposal_id ${d.key} NOT NULL,
  attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT,
  digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL, at ${d.bigint} NOT NULL,
  leaf_hash TEXT NOT NULL, chain_hash TEXT NOT NULL, seal TEXT,
  PRIMARY KEY (tenant, seq)
)${d.clustered}`,
      'CREATE INDEX countersign_audit_by_proposal ON countersign_audit_events (tenant, proposal_id, seq)',
      `CREATE TABLE countersign_audit_heads (
  tenant ${d.key} PRIMARY KEY, seq ${d.bigint} NOT NULL, chain_hash TEXT NOT NULL
)${d.clustered}`,
    ],
  },
  {
    version: 2,
    name: 'grants',
    statements: (d) => [
      `CREATE TABLE countersign_grants (
  tenant ${d.key} NOT NULL, id ${d.key} NOT NULL, subject ${d.key} NOT NULL,
  operations_json TEXT NOT NULL, resource TEXT NOT NULL, constraints_json TEXT NOT NULL, cap_field TEXT,
  cap_total ${d.bigint}, cap_uses ${d.bigint}, used_count ${d.bigint} NOT NULL, used_total ${d.bigint} NOT NULL,
  expires_at ${d.bigint} NOT NULL, created_at ${d.bigint} NOT NULL, created_by TEXT NOT NULL,
  revoked_at ${d.bigint}, revoked_by TEXT, note TEXT,
  PRIMARY KEY (tenant, id)
)${d.clustered}`,
      'CREATE INDEX countersign_grants_by_subject ON countersign_grants (tenant, subject, created_at)',
      ...on(d, 'postgres', GRANTS_BY_CREATED),
    ],
  },
  {
    version: 3,
    name: 'proposal editor (stored format 2)',
    statements: () => ['ALTER TABLE countersign_proposals ADD COLUMN edited_by TEXT'],
  },
  {
    version: 4,
    name: 'proposal quotas',
    statements: (d) => [
      "CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by) WHERE status = 'pending'",
      'CREATE INDEX countersign_proposals_by_requester ON countersign_proposals (tenant, requested_by, created_at)',
      ...on(d, 'sqlite', PROPOSALS_BY_CREATED),
    ],
  },
  {
    version: 5,
    name: 'approval policies with quorum (stored format 3)',
    statements: (d) => [
      'ALTER TABLE countersign_proposals ADD COLUMN policy_json TEXT',
      'ALTER TABLE countersign_grants ADD COLUMN satisfies_quorum INTEGER NOT NULL DEFAULT 0',
      `CREATE TABLE countersign_approvals (
  tenant ${d.key} NOT NULL, proposal_id ${d.key} NOT NULL,
  approver ${d.key} NOT NULL, digest TEXT NOT NULL, at ${d.bigint} NOT NULL,
  PRIMARY KEY (tenant, proposal_id, approver)
)${d.clustered}`,
    ],
  },
  {
    version: 6,
    name: 'sealed quorum approvals',
    statements: () => ['ALTER TABLE countersign_approvals ADD COLUMN seal TEXT'],
  },
  {
    version: 7,
    name: 'notification outbox',
    statements: (d) => [
      `CREATE TABLE countersign_outbox (
  tenant ${d.key} NOT NULL, id ${d.key} NOT NULL, event_id TEXT NOT NULL,
  channel TEXT NOT NULL, type TEXT NOT NULL, proposal_id ${d.key} NOT NULL,
  payload_json TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, next_at ${d.bigint} NOT NULL,
  lease_until ${d.bigint}, lease_owner TEXT, last_error TEXT, last_attempt_at ${d.bigint}, delivered_at ${d.bigint},
  retry_from ${d.bigint} NOT NULL, created_at ${d.bigint} NOT NULL,
  PRIMARY KEY (tenant, id)
)${d.clustered}`,
      "CREATE INDEX countersign_outbox_due ON countersign_outbox (next_at) WHERE status = 'pending'",
      'CREATE INDEX countersign_outbox_by_created ON countersign_outbox (tenant, created_at, id)',
    ],
  },
  {
    version: 8,
    name: 'recently changed proposals by status',
    // The inbox's recent tab counts decided proposals changed since a time: without it, the count
    // reads every proposal of the tenant (bench:scale).
    statements: () => [
      'CREATE INDEX countersign_proposals_by_status_updated ON countersign_proposals (tenant, status, updated_at)',
    ],
  },
  {
    version: 9,
    name: 'review lookups by resource and by pending scope',
    // The proposal page's Replaces / Replaced by and same-scope lookups (engine.proposals.related).
    statements: () => [
      'CREATE INDEX countersign_proposals_by_resource ON countersign_proposals (tenant, resource, operation, created_at, id)',
      "CREATE INDEX countersign_proposals_pending_by_scope ON countersign_proposals (tenant, scope_digest) WHERE status = 'pending'",
    ],
  },
  {
    version: 10,
    name: 'principal directory',
    statements: () => DIRECTORY_TABLES,
  },
  {
    version: 11,
    name: 'audit events queued for batched chaining',
    // Where another transaction holds a tenant's chain head (PostgreSQL), events wait here, in
    // commit order of their `n`, and are chained in a batch after their transaction commits (see
    // SqlStore). SQLite chains every event under its write lock and never queues one.
    statements: (d) => [
      `CREATE TABLE countersign_audit_queue (
  n ${d.serialKey}, tenant ${d.key} NOT NULL, id TEXT NOT NULL UNIQUE,
  proposal_id ${d.key} NOT NULL, attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL,
  actor TEXT NOT NULL, reason TEXT, digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL,
  at ${d.bigint} NOT NULL, seal TEXT
)`,
      'CREATE INDEX countersign_audit_queue_by_tenant ON countersign_audit_queue (tenant, n)',
    ],
  },
  {
    version: 12,
    name: 'proposal rate counters',
    // Proposals made per (tenant, requester, second), and per (tenant, second) under requester '':
    // the rate quota sums at most 61 of them instead of reading every proposal of the last minute.
    // Filled with the last two minutes' proposals so the quota holds across the upgrade. The
    // pending counts get partial indexes that lead with the tenant and end with the expiry: without
    // them SQLite counted from the expiry index, i.e. every tenant's pending proposals.
    statements: (d) => [
      'DROP INDEX countersign_proposals_pending_by_requester',
      "CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by, expires_at) WHERE status = 'pending'",
      "CREATE INDEX countersign_proposals_pending_by_tenant ON countersign_proposals (tenant, expires_at) WHERE status = 'pending'",
      `CREATE TABLE countersign_proposal_rates (
  tenant ${d.key} NOT NULL, requested_by ${d.key} NOT NULL, second ${d.bigint} NOT NULL,
  created ${d.bigint} NOT NULL,
  PRIMARY KEY (tenant, requested_by, second)
)${d.clustered}`,
      `INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created)
  SELECT tenant, requested_by, created_at / 1000, COUNT(*) FROM countersign_proposals
  WHERE created_at >= (${d.nowSeconds} - 120) * 1000 AND requested_by <> ''
  GROUP BY tenant, requested_by, created_at / 1000`,
      `INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created)
  SELECT tenant, '', created_at / 1000, COUNT(*) FROM countersign_proposals
  WHERE created_at >= (${d.nowSeconds} - 120) * 1000
  GROUP BY tenant, created_at / 1000`,
    ],
  },
  {
    version: 13,
    name: 'one chained audit event per id',
    // A queued row copied while it waited and inserted again after it was chained would otherwise
    // be chained a second time; the pass refuses such a row and `verifyAudit` names it.
    statements: () => [
      'CREATE UNIQUE INDEX countersign_audit_events_id ON countersign_audit_events (tenant, id)',
    ],
  },
  {
    version: 14,
    name: 'finished notification deliveries by age',
    // The dispatcher deletes deliveries finished longer ago than the retention (see
    // Dispatcher.pruneOnce); without it the delete would read every delivery of every tenant.
    statements: () => [
      "CREATE INDEX countersign_outbox_finished ON countersign_outbox (retry_from) WHERE status <> 'pending'",
    ],
  },
  {
    version: 15,
    name: 'sealed grants',
    // With a seal key, each grant row carries an HMAC of every column, written again on each spend
    // and revocation: a grant inserted or widened by hand (cap, expiry, subject, constraints,
    // usage, revocation) no longer approves anything.
    statements: () => ['ALTER TABLE countersign_grants ADD COLUMN seal TEXT'],
  },
  {
    version: 16,
    name: 'sealed notification deliveries',
    // With a seal key, each delivery row carries an HMAC of what it sends and to whom (tenant, id,
    // channel, event, proposal, payload, creation time): a row inserted or edited by hand is never
    // sent, so the webhook secret never signs a forged event.
    statements: () => ['ALTER TABLE countersign_outbox ADD COLUMN seal TEXT'],
  },
  {
    version: 17,
    name: 'grant approvals and revocations in the audit',
    // Before a grant approves, the engine counts the approvals and looks for a revocation the audit
    // records of it: a grant row written back to an earlier sealed copy claims fewer. Partial
    // indexes, so only grant approvals and revocations pay for them (a revocation's proposal id is
    // the grant's id). The revocations index names the reason too: with only the step, SQLite
    // read the tenant's whole chain for the lookup.
    statements: () => [
      "CREATE INDEX countersign_audit_grant_approvals ON countersign_audit_events (tenant, actor) WHERE reason = 'approved_by_grant'",
      "CREATE INDEX countersign_audit_queue_grant_approvals ON countersign_audit_queue (tenant, actor) WHERE reason = 'approved_by_grant'",
      "CREATE INDEX countersign_audit_grant_revocations ON countersign_audit_events (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked'",
      "CREATE INDEX countersign_audit_queue_grant_revocations ON countersign_audit_queue (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked'",
    ],
  },
  {
    version: 18,
    name: 'attempts awaiting automatic reconciliation',
    // An attempt left needs_reconciliation keeps in lease_until when the automatic reconciliation
    // next asks the provider (engine.sweeps.reconcileDue): a partial index, so only those attempts pay for it.
    statements: () => [
      "CREATE INDEX countersign_attempts_reconciliation ON countersign_attempts (lease_until) WHERE status = 'needs_reconciliation'",
    ],
  },
  {
    version: 19,
    name: 'operator email skeletons',
    // The UTS #39 skeleton of each operator's email (src/server/directory/confusable-email.ts),
    // unique: an email that looks like another operator's is refused, even by two sign-ins at once.
    // Rows from before stay NULL (NULLs never collide) and are compared by computing theirs.
    statements: () => [
      'ALTER TABLE countersign_operators ADD COLUMN email_skeleton TEXT',
      'CREATE UNIQUE INDEX countersign_operators_email_skeleton ON countersign_operators (email_skeleton)',
    ],
  },
  {
    version: 20,
    name: 'single-sign-on sessions',
    // A session opened through an identity provider names its issuer (such a session lives at most
    // the directory's providerSessionMaxMs) and keeps the provider's ID token, encrypted under a key
    // derived from the session id, for the logout's id_token_hint.
    statements: () => [
      'ALTER TABLE countersign_sessions ADD COLUMN issuer TEXT',
      'ALTER TABLE countersign_sessions ADD COLUMN id_token TEXT',
    ],
  },
  {
    version: 21,
    name: 'one schema on every dialect',
    // What versions 1 and 2 gave the dialects differently, made the same: SQLite gets the grants
    // index by creation (without it, listing a tenant's grants sorted all of them) and PostgreSQL's
    // partial sweep indexes (smaller: only pending proposals and executing attempts; SQLite's
    // reconciliation sweep then reads its own index of version 18 instead of the leases one). On
    // PostgreSQL the idempotency key's unique index becomes the unique constraint SQLite has.
    statements: (d) => [
      ...on(
        d,
        'sqlite',
        GRANTS_BY_CREATED,
        'DROP INDEX countersign_proposals_expiry',
        PROPOSALS_EXPIRY,
        'DROP INDEX countersign_attempts_leases',
        ATTEMPTS_LEASES,
      ),
      ...on(
        d,
        'postgres',
        'ALTER TABLE countersign_attempts ADD CONSTRAINT countersign_attempts_idempotency_key UNIQUE USING INDEX countersign_attempts_idempotency_key',
      ),
    ],
  },
  {
    version: 22,
    name: 'slack approvals',
    // The Slack message each proposal was posted as (channel and ts), so later lifecycle events
    // update it in place; and the Slack users an admin linked to an operator of the tenant, for
    // workspaces whose users.info gives no verified email.
    statements: (d) => [
      `CREATE TABLE countersign_slack_messages (
  tenant ${d.key} NOT NULL, proposal_id ${d.key} NOT NULL, channel TEXT NOT NULL, ts TEXT NOT NULL,
  posted_at ${d.bigint} NOT NULL,
  PRIMARY KEY (tenant, proposal_id)
)${d.clustered}`,
      `CREATE TABLE countersign_slack_users (
  tenant ${d.key} NOT NULL, slack_user ${d.key} NOT NULL, operator_email TEXT NOT NULL,
  linked_by TEXT NOT NULL, linked_at ${d.bigint} NOT NULL,
  PRIMARY KEY (tenant, slack_user)
)${d.clustered}`,
    ],
  },
  {
    version: 23,
    name: 'routing and escalation',
    // Groups and routes per tenant (admin-managed), the route each proposal was given when it was
    // created (a copy, so changing a route never re-routes a pending proposal), and the one
    // reminder each proposal gets before it expires. The escalation sweep runs across tenants over
    // a partial index of the routes not escalated yet.
    statements: (d) => [
      `CREATE TABLE countersign_groups (
        tenant ${d.key} NOT NULL,
        name ${d.key} NOT NULL,
        members_json TEXT NOT NULL,
        created_at ${d.bigint} NOT NULL,
        updated_at ${d.bigint} NOT NULL,
        PRIMARY KEY (tenant, name)
      )${d.clustered}`,
      `CREATE TABLE countersign_routes (
        tenant ${d.key} NOT NULL,
        id ${d.key} NOT NULL,
        name TEXT NOT NULL,
        position ${d.bigint} NOT NULL,
        operation TEXT NOT NULL,
        resource TEXT,
        amount_field TEXT,
        above ${d.bigint},
        group_name TEXT NOT NULL,
        channel TEXT,
        escalate_after_ms ${d.bigint},
        escalation_group TEXT,
        escalation_channel TEXT,
        created_at ${d.bigint} NOT NULL,
        updated_at ${d.bigint} NOT NULL,
        PRIMARY KEY (tenant, id)
      )${d.clustered}`,
      `CREATE TABLE countersign_proposal_routes (
        tenant ${d.key} NOT NULL,
        proposal_id ${d.key} NOT NULL,
        route_id TEXT NOT NULL,
        route_name TEXT NOT NULL,
        group_name TEXT NOT NULL,
        channel TEXT,
        escalate_at ${d.bigint},
        escalation_group TEXT,
        escalation_channel TEXT,
        escalated_at ${d.bigint},
        PRIMARY KEY (tenant, proposal_id)
      )${d.clustered}`,
      'CREATE INDEX countersign_proposal_routes_escalation ON countersign_proposal_routes (escalate_at) WHERE escalated_at IS NULL',
      `CREATE TABLE countersign_reminders (
        tenant ${d.key} NOT NULL,
        proposal_id ${d.key} NOT NULL,
        reminded_at ${d.bigint} NOT NULL,
        PRIMARY KEY (tenant, proposal_id)
      )${d.clustered}`,
    ],
  },
  {
    version: 24,
    name: 'audit events in insertion order on SQLite',
    // SQLite keeps a WITHOUT ROWID table in an index b-tree, where a row holds at most about a
    // quarter of a page before the rest goes to an overflow page of its own: with 1 KiB pages an
    // event (350-550 bytes) left most of such a page empty (a database 1.8 times larger) and added
    // one to every WAL commit. An ordinary table keeps rows of up to a page whole and appends them in
    // order; (tenant, seq) stays the primary key, now as an index of its own.
    statements: (d) =>
      on(
        d,
        'sqlite',
        `CREATE TABLE countersign_audit_events_v24 (
  tenant TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, proposal_id TEXT NOT NULL,
  attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT,
  digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL, at INTEGER NOT NULL,
  leaf_hash TEXT NOT NULL, chain_hash TEXT NOT NULL, seal TEXT,
  PRIMARY KEY (tenant, seq)
)`,
        'INSERT INTO countersign_audit_events_v24 SELECT * FROM countersign_audit_events ORDER BY tenant, seq',
        'DROP TABLE countersign_audit_events',
        'ALTER TABLE countersign_audit_events_v24 RENAME TO countersign_audit_events',
        'CREATE INDEX countersign_audit_by_proposal ON countersign_audit_events (tenant, proposal_id, seq)',
        'CREATE UNIQUE INDEX countersign_audit_events_id ON countersign_audit_events (tenant, id)',
        "CREATE INDEX countersign_audit_grant_approvals ON countersign_audit_events (tenant, actor) WHERE reason = 'approved_by_grant'",
        "CREATE INDEX countersign_audit_grant_revocations ON countersign_audit_events (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked'",
      ),
  },
  {
    version: 25,
    name: 'proposals keyed by their id alone, in an ordinary table on SQLite',
    // A proposal's id is unique across tenants (its public id, version 1), so (tenant, id) was a
    // second unique index every proposal wrote: the id alone is the primary key now, and every
    // lookup still names the tenant. On SQLite, as version 24 did for audit events: a proposal
    // (800-1,000 bytes with its frozen arguments, scope and preview) overflowed the index b-tree of
    // a WITHOUT ROWID table, and every status change freed and rewrote its overflow page. An
    // ordinary table keeps the row whole in its leaf, and its indexes hold a rowid, not (tenant, id):
    // the indexes a run's and a requester's pages read end in the id, which orders them, as the
    // key's columns did implicitly (on PostgreSQL they spare those pages a sort).
    statements: (d) => [
      ...on(
        d,
        'sqlite',
        `CREATE TABLE countersign_proposals_v25 (
${SQLITE_PROPOSAL_COLUMNS_V24}
  PRIMARY KEY (id)
)`,
        'INSERT INTO countersign_proposals_v25 SELECT * FROM countersign_proposals ORDER BY id',
        'DROP TABLE countersign_proposals',
        'ALTER TABLE countersign_proposals_v25 RENAME TO countersign_proposals',
        'CREATE INDEX countersign_proposals_by_status ON countersign_proposals (tenant, status, created_at, id)',
        PROPOSALS_BY_RUN,
        PROPOSALS_BY_REQUESTER,
        PROPOSALS_BY_CREATED,
        'CREATE INDEX countersign_proposals_by_status_updated ON countersign_proposals (tenant, status, updated_at)',
        'CREATE INDEX countersign_proposals_by_resource ON countersign_proposals (tenant, resource, operation, created_at, id)',
        "CREATE INDEX countersign_proposals_pending_by_scope ON countersign_proposals (tenant, scope_digest) WHERE status = 'pending'",
        "CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by, expires_at) WHERE status = 'pending'",
        "CREATE INDEX countersign_proposals_pending_by_tenant ON countersign_proposals (tenant, expires_at) WHERE status = 'pending'",
        PROPOSALS_EXPIRY,
      ),
      // The unique index of the public id becomes the key (renamed to the key's name).
      ...on(
        d,
        'postgres',
        'ALTER TABLE countersign_proposals DROP CONSTRAINT countersign_proposals_pkey',
        'ALTER TABLE countersign_proposals ADD CONSTRAINT countersign_proposals_pkey PRIMARY KEY USING INDEX countersign_proposals_public_id',
        'DROP INDEX countersign_proposals_by_run',
        PROPOSALS_BY_RUN,
        'DROP INDEX countersign_proposals_by_requester',
        PROPOSALS_BY_REQUESTER,
      ),
    ],
  },
  {
    version: 26,
    name: 'the recent index without pending proposals',
    // The index of recent changes serves the "recently decided" tab. It leaves out pending
    // proposals, which the tab never lists, and executing ones, a few in flight, which the tab
    // reads by status: a proposal enters it once, when it ends, instead of on every status change.
    // Led by the time of the change instead of the status; the status, trailing, still filters
    // without the row. About three WAL pages fewer per approved call on SQLite.
    statements: () => [
      'DROP INDEX countersign_proposals_by_status_updated',
      "CREATE INDEX countersign_proposals_by_updated ON countersign_proposals (tenant, updated_at, status) WHERE status <> 'pending' AND status <> 'executing'",
    ],
  },
  {
    version: 27,
    name: 'sweeps read pending proposals tenant by tenant',
    // The expiry and reminder sweeps read (tenant, expires_at) of each tenant with a pending
    // proposal (see pendingDueSql) instead of an index across tenants that every proposal wrote
    // on creation and again on its decision.
    statements: () => ['DROP INDEX countersign_proposals_expiry'],
  },
];

/** The migrations as one dialect runs them. */
export function migrationsFor(dialect: MigrationDialect): readonly SqlMigration[] {
  return MIGRATIONS.map((m) => ({ version: m.version, name: m.name, statements: m.statements(dialect) }));
}
