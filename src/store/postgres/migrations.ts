import { DIRECTORY_TABLES } from '../sql/directory-tables.js';
import type { SqlMigration } from '../sql/sql-store.js';

/** One versioned schema migration of the PostgreSQL store: statements applied in one transaction. */
export type PostgresMigration = SqlMigration;

// Mirrors the SQLite schema (src/store/sqlite/migrations.ts) column for column: BIGINT for ms
// timestamps, TEXT for JSON (canonical text, never jsonb: digests are recomputed from exactly the
// stored bytes), COLLATE "C" on keys so ordering and paging are bytewise as in SQLite. The tenant
// leads every primary key and every per-tenant index. Three indexes are deliberately not
// tenant-first: the public proposal id and the idempotency key are unique across tenants, and the
// expiry and lease sweeps run across tenants (partial indexes over the rows they look for).

/** Versioned schema migrations of the PostgreSQL store. Never edit a released one: add the next. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    version: 1,
    name: 'proposals, attempts, audit',
    statements: [
      `CREATE TABLE countersign_proposals (
  tenant TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, format_version INTEGER NOT NULL,
  run_id TEXT COLLATE "C" NOT NULL, section TEXT, resource TEXT NOT NULL, requested_by TEXT NOT NULL,
  operation TEXT COLLATE "C" NOT NULL, scope_version INTEGER NOT NULL, view_version INTEGER NOT NULL,
  request_json TEXT NOT NULL, arguments_json TEXT NOT NULL, scope_json TEXT NOT NULL,
  scope_digest TEXT NOT NULL, preview_json TEXT NOT NULL, digest TEXT NOT NULL, seal TEXT,
  status TEXT COLLATE "C" NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL,
  supersedes TEXT, superseded_by TEXT, decided_by TEXT, decided_at BIGINT, approval_kind TEXT,
  grant_id TEXT, decision_note TEXT, current_attempt INTEGER NOT NULL, outcome_json TEXT,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, id)
)`,
      'CREATE UNIQUE INDEX countersign_proposals_public_id ON countersign_proposals (id)',
      'CREATE INDEX countersign_proposals_by_status ON countersign_proposals (tenant, status, created_at, id)',
      'CREATE INDEX countersign_proposals_by_created ON countersign_proposals (tenant, created_at, id)',
      'CREATE INDEX countersign_proposals_by_run ON countersign_proposals (tenant, run_id, created_at)',
      "CREATE INDEX countersign_proposals_expiry ON countersign_proposals (expires_at) WHERE status = 'pending'",
      `CREATE TABLE countersign_attempts (
  tenant TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, proposal_id TEXT COLLATE "C" NOT NULL,
  number INTEGER NOT NULL, idempotency_key TEXT COLLATE "C" NOT NULL, status TEXT COLLATE "C" NOT NULL,
  lease_until BIGINT NOT NULL, command_id TEXT, started_at BIGINT NOT NULL, finished_at BIGINT,
  PRIMARY KEY (tenant, id),
  UNIQUE (tenant, proposal_id, number)
)`,
      'CREATE UNIQUE INDEX countersign_attempts_idempotency_key ON countersign_attempts (idempotency_key)',
      "CREATE INDEX countersign_attempts_leases ON countersign_attempts (lease_until) WHERE status = 'executing'",
      `CREATE TABLE countersign_audit_events (
  tenant TEXT COLLATE "C" NOT NULL, seq BIGINT NOT NULL, id TEXT NOT NULL, proposal_id TEXT COLLATE "C" NOT NULL,
  attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT,
  digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL, at BIGINT NOT NULL,
  leaf_hash TEXT NOT NULL, chain_hash TEXT NOT NULL, seal TEXT,
  PRIMARY KEY (tenant, seq)
)`,
      'CREATE INDEX countersign_audit_by_proposal ON countersign_audit_events (tenant, proposal_id, seq)',
      `CREATE TABLE countersign_audit_heads (
  tenant TEXT COLLATE "C" PRIMARY KEY, seq BIGINT NOT NULL, chain_hash TEXT NOT NULL
)`,
    ],
  },
  {
    version: 2,
    name: 'grants',
    statements: [
      `CREATE TABLE countersign_grants (
  tenant TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, subject TEXT COLLATE "C" NOT NULL,
  operations_json TEXT NOT NULL, resource TEXT NOT NULL, constraints_json TEXT NOT NULL, cap_field TEXT,
  cap_total BIGINT, cap_uses BIGINT, used_count BIGINT NOT NULL, used_total BIGINT NOT NULL,
  expires_at BIGINT NOT NULL, created_at BIGINT NOT NULL, created_by TEXT NOT NULL,
  revoked_at BIGINT, revoked_by TEXT, note TEXT,
  PRIMARY KEY (tenant, id)
)`,
      'CREATE INDEX countersign_grants_by_subject ON countersign_grants (tenant, subject, created_at)',
      'CREATE INDEX countersign_grants_by_created ON countersign_grants (tenant, created_at, id)',
    ],
  },
  {
    version: 3,
    name: 'proposal editor (stored format 2)',
    statements: ['ALTER TABLE countersign_proposals ADD COLUMN edited_by TEXT'],
  },
  {
    version: 4,
    name: 'proposal quotas',
    statements: [
      "CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by) WHERE status = 'pending'",
      'CREATE INDEX countersign_proposals_by_requester ON countersign_proposals (tenant, requested_by, created_at)',
    ],
  },
  {
    version: 5,
    name: 'approval policies with quorum (stored format 3)',
    statements: [
      'ALTER TABLE countersign_proposals ADD COLUMN policy_json TEXT',
      'ALTER TABLE countersign_grants ADD COLUMN satisfies_quorum INTEGER NOT NULL DEFAULT 0',
      `CREATE TABLE countersign_approvals (
  tenant TEXT COLLATE "C" NOT NULL, proposal_id TEXT COLLATE "C" NOT NULL,
  approver TEXT COLLATE "C" NOT NULL, digest TEXT NOT NULL, at BIGINT NOT NULL,
  PRIMARY KEY (tenant, proposal_id, approver)
)`,
    ],
  },
  {
    version: 6,
    name: 'sealed quorum approvals',
    statements: ['ALTER TABLE countersign_approvals ADD COLUMN seal TEXT'],
  },
  {
    version: 7,
    name: 'notification outbox',
    statements: [
      `CREATE TABLE countersign_outbox (
  tenant TEXT COLLATE "C" NOT NULL, id TEXT COLLATE "C" NOT NULL, event_id TEXT NOT NULL,
  channel TEXT NOT NULL, type TEXT NOT NULL, proposal_id TEXT COLLATE "C" NOT NULL,
  payload_json TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, next_at BIGINT NOT NULL,
  lease_until BIGINT, lease_owner TEXT, last_error TEXT, last_attempt_at BIGINT, delivered_at BIGINT,
  retry_from BIGINT NOT NULL, created_at BIGINT NOT NULL,
  PRIMARY KEY (tenant, id)
)`,
      "CREATE INDEX countersign_outbox_due ON countersign_outbox (next_at) WHERE status = 'pending'",
      'CREATE INDEX countersign_outbox_by_created ON countersign_outbox (tenant, created_at, id)',
    ],
  },
  {
    version: 8,
    name: 'recently changed proposals by status',
    // The inbox's recent tab counts decided proposals changed since a time: without it, the count
    // reads every decided proposal of the tenant from the table (bench:scale).
    statements: [
      'CREATE INDEX countersign_proposals_by_status_updated ON countersign_proposals (tenant, status, updated_at)',
    ],
  },
  {
    version: 9,
    name: 'review lookups by resource and by pending scope',
    // The proposal page's Replaces / Replaced by and same-scope lookups (engine.related).
    statements: [
      'CREATE INDEX countersign_proposals_by_resource ON countersign_proposals (tenant, resource, operation, created_at, id)',
      "CREATE INDEX countersign_proposals_pending_by_scope ON countersign_proposals (tenant, scope_digest) WHERE status = 'pending'",
    ],
  },
  {
    version: 10,
    name: 'principal directory',
    statements: DIRECTORY_TABLES,
  },
  {
    version: 11,
    name: 'audit events queued for batched chaining',
    // Where another transaction holds a tenant's chain head, events wait here (in commit order of
    // their `n`) and are chained in a batch after their transaction commits (see SqlStore).
    statements: [
      `CREATE TABLE countersign_audit_queue (
  n BIGSERIAL PRIMARY KEY, tenant TEXT COLLATE "C" NOT NULL, id TEXT NOT NULL UNIQUE,
  proposal_id TEXT COLLATE "C" NOT NULL, attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL,
  actor TEXT NOT NULL, reason TEXT, digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL,
  at BIGINT NOT NULL, seal TEXT
)`,
      'CREATE INDEX countersign_audit_queue_by_tenant ON countersign_audit_queue (tenant, n)',
    ],
  },
  {
    version: 12,
    name: 'proposal rate counters',
    statements: [
      'DROP INDEX countersign_proposals_pending_by_requester',
      "CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by, expires_at) WHERE status = 'pending'",
      "CREATE INDEX countersign_proposals_pending_by_tenant ON countersign_proposals (tenant, expires_at) WHERE status = 'pending'",
      `CREATE TABLE countersign_proposal_rates (
  tenant TEXT COLLATE "C" NOT NULL, requested_by TEXT COLLATE "C" NOT NULL, second BIGINT NOT NULL,
  created BIGINT NOT NULL,
  PRIMARY KEY (tenant, requested_by, second)
)`,
      `INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created)
  SELECT tenant, requested_by, created_at / 1000, COUNT(*) FROM countersign_proposals
  WHERE created_at >= (EXTRACT(EPOCH FROM now())::bigint - 120) * 1000 AND requested_by <> ''
  GROUP BY tenant, requested_by, created_at / 1000`,
      `INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created)
  SELECT tenant, '', created_at / 1000, COUNT(*) FROM countersign_proposals
  WHERE created_at >= (EXTRACT(EPOCH FROM now())::bigint - 120) * 1000
  GROUP BY tenant, created_at / 1000`,
    ],
  },
  {
    version: 13,
    name: 'one chained audit event per id',
    // See the SQLite migration of the same number.
    statements: ['CREATE UNIQUE INDEX countersign_audit_events_id ON countersign_audit_events (tenant, id)'],
  },
  {
    version: 14,
    name: 'finished notification deliveries by age',
    statements: [
      "CREATE INDEX countersign_outbox_finished ON countersign_outbox (retry_from) WHERE status <> 'pending'",
    ],
  },
  {
    version: 15,
    name: 'sealed grants',
    // See the SQLite migration of the same number.
    statements: ['ALTER TABLE countersign_grants ADD COLUMN seal TEXT'],
  },
  {
    version: 16,
    name: 'sealed notification deliveries',
    // See the SQLite migration of the same number.
    statements: ['ALTER TABLE countersign_outbox ADD COLUMN seal TEXT'],
  },
  {
    version: 17,
    name: 'grant approvals and revocations in the audit',
    // See the SQLite migration of the same number.
    statements: [
      "CREATE INDEX countersign_audit_grant_approvals ON countersign_audit_events (tenant, actor) WHERE reason = 'approved_by_grant'",
      "CREATE INDEX countersign_audit_queue_grant_approvals ON countersign_audit_queue (tenant, actor) WHERE reason = 'approved_by_grant'",
      "CREATE INDEX countersign_audit_grant_revocations ON countersign_audit_events (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked'",
      "CREATE INDEX countersign_audit_queue_grant_revocations ON countersign_audit_queue (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked'",
    ],
  },
  {
    version: 18,
    name: 'attempts awaiting automatic reconciliation',
    // See the SQLite migration of the same number.
    statements: [
      "CREATE INDEX countersign_attempts_reconciliation ON countersign_attempts (lease_until) WHERE status = 'needs_reconciliation'",
    ],
  },
];
