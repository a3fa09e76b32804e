import { DIRECTORY_TABLES } from '../sql/directory-tables.js';

/** Versioned schema migrations of the SQLite store. Never edit a released one: add the next. */
export const SQLITE_MIGRATIONS: readonly {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}[] = [
  {
    version: 1,
    name: 'proposals, attempts, audit',
    sql: `
CREATE TABLE countersign_proposals (
  tenant TEXT NOT NULL, id TEXT NOT NULL, format_version INTEGER NOT NULL, run_id TEXT NOT NULL,
  section TEXT, resource TEXT NOT NULL, requested_by TEXT NOT NULL, operation TEXT NOT NULL,
  scope_version INTEGER NOT NULL, view_version INTEGER NOT NULL, request_json TEXT NOT NULL,
  arguments_json TEXT NOT NULL, scope_json TEXT NOT NULL, scope_digest TEXT NOT NULL,
  preview_json TEXT NOT NULL, digest TEXT NOT NULL, seal TEXT, status TEXT NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, supersedes TEXT, superseded_by TEXT,
  decided_by TEXT, decided_at INTEGER, approval_kind TEXT, grant_id TEXT, decision_note TEXT,
  current_attempt INTEGER NOT NULL, outcome_json TEXT, updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
CREATE UNIQUE INDEX countersign_proposals_public_id ON countersign_proposals (id);
CREATE INDEX countersign_proposals_by_status ON countersign_proposals (tenant, status, created_at, id);
CREATE INDEX countersign_proposals_by_run ON countersign_proposals (tenant, run_id, created_at);
CREATE INDEX countersign_proposals_expiry ON countersign_proposals (status, expires_at);
CREATE TABLE countersign_attempts (
  tenant TEXT NOT NULL, id TEXT NOT NULL, proposal_id TEXT NOT NULL, number INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL, status TEXT NOT NULL, lease_until INTEGER NOT NULL,
  command_id TEXT, started_at INTEGER NOT NULL, finished_at INTEGER,
  PRIMARY KEY (tenant, id),
  UNIQUE (tenant, proposal_id, number),
  UNIQUE (idempotency_key)
) WITHOUT ROWID;
CREATE INDEX countersign_attempts_leases ON countersign_attempts (status, lease_until);
CREATE TABLE countersign_audit_events (
  tenant TEXT NOT NULL, seq INTEGER NOT NULL, id TEXT NOT NULL, proposal_id TEXT NOT NULL,
  attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL, actor TEXT NOT NULL, reason TEXT,
  digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL, at INTEGER NOT NULL,
  leaf_hash TEXT NOT NULL, chain_hash TEXT NOT NULL, seal TEXT,
  PRIMARY KEY (tenant, seq)
) WITHOUT ROWID;
CREATE INDEX countersign_audit_by_proposal ON countersign_audit_events (tenant, proposal_id, seq);
CREATE TABLE countersign_audit_heads (
  tenant TEXT PRIMARY KEY, seq INTEGER NOT NULL, chain_hash TEXT NOT NULL
) WITHOUT ROWID;
`,
  },
  {
    version: 2,
    name: 'grants',
    sql: `
CREATE TABLE countersign_grants (
  tenant TEXT NOT NULL, id TEXT NOT NULL, subject TEXT NOT NULL, operations_json TEXT NOT NULL,
  resource TEXT NOT NULL, constraints_json TEXT NOT NULL, cap_field TEXT, cap_total INTEGER,
  cap_uses INTEGER, used_count INTEGER NOT NULL, used_total INTEGER NOT NULL,
  expires_at INTEGER NOT NULL, created_at INTEGER NOT NULL, created_by TEXT NOT NULL,
  revoked_at INTEGER, revoked_by TEXT, note TEXT,
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
CREATE INDEX countersign_grants_by_subject ON countersign_grants (tenant, subject, created_at);
`,
  },
  {
    version: 3,
    name: 'proposal editor (stored format 2)',
    sql: `
ALTER TABLE countersign_proposals ADD COLUMN edited_by TEXT;
`,
  },
  {
    version: 4,
    name: 'proposal quotas',
    sql: `
CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by) WHERE status = 'pending';
CREATE INDEX countersign_proposals_by_requester ON countersign_proposals (tenant, requested_by, created_at);
CREATE INDEX countersign_proposals_by_created ON countersign_proposals (tenant, created_at, id);
`,
  },
  {
    version: 5,
    name: 'approval policies with quorum (stored format 3)',
    sql: `
ALTER TABLE countersign_proposals ADD COLUMN policy_json TEXT;
ALTER TABLE countersign_grants ADD COLUMN satisfies_quorum INTEGER NOT NULL DEFAULT 0;
CREATE TABLE countersign_approvals (
  tenant TEXT NOT NULL, proposal_id TEXT NOT NULL, approver TEXT NOT NULL, digest TEXT NOT NULL,
  at INTEGER NOT NULL,
  PRIMARY KEY (tenant, proposal_id, approver)
) WITHOUT ROWID;
`,
  },
  {
    version: 6,
    name: 'sealed quorum approvals',
    sql: `
ALTER TABLE countersign_approvals ADD COLUMN seal TEXT;
`,
  },
  {
    version: 7,
    name: 'notification outbox',
    sql: `
CREATE TABLE countersign_outbox (
  tenant TEXT NOT NULL, id TEXT NOT NULL, event_id TEXT NOT NULL, channel TEXT NOT NULL,
  type TEXT NOT NULL, proposal_id TEXT NOT NULL, payload_json TEXT NOT NULL, status TEXT NOT NULL,
  attempts INTEGER NOT NULL, next_at INTEGER NOT NULL, lease_until INTEGER, lease_owner TEXT,
  last_error TEXT, last_attempt_at INTEGER, delivered_at INTEGER, retry_from INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant, id)
) WITHOUT ROWID;
CREATE INDEX countersign_outbox_due ON countersign_outbox (next_at) WHERE status = 'pending';
CREATE INDEX countersign_outbox_by_created ON countersign_outbox (tenant, created_at, id);
`,
  },
  {
    version: 8,
    name: 'recently changed proposals by status',
    // The inbox's recent tab counts decided proposals changed since a time: without it, the count
    // reads every proposal of the tenant (bench:scale).
    sql: `
CREATE INDEX countersign_proposals_by_status_updated ON countersign_proposals (tenant, status, updated_at);
`,
  },
  {
    version: 9,
    name: 'review lookups by resource and by pending scope',
    // The proposal page's Replaces / Replaced by and same-scope lookups (engine.related).
    sql: `
CREATE INDEX countersign_proposals_by_resource ON countersign_proposals (tenant, resource, operation, created_at, id);
CREATE INDEX countersign_proposals_pending_by_scope ON countersign_proposals (tenant, scope_digest) WHERE status = 'pending';
`,
  },
  {
    version: 10,
    name: 'principal directory',
    sql: `${DIRECTORY_TABLES.join(';\n')};`,
  },
  {
    version: 11,
    name: 'audit events queued for batched chaining',
    // The same table as PostgreSQL's, so both stores share one schema; SQLite chains every event
    // under its write lock and never queues one.
    sql: `CREATE TABLE countersign_audit_queue (
  n INTEGER PRIMARY KEY AUTOINCREMENT, tenant TEXT NOT NULL, id TEXT NOT NULL UNIQUE,
  proposal_id TEXT NOT NULL, attempt_id TEXT, run_id TEXT NOT NULL, step TEXT NOT NULL,
  actor TEXT NOT NULL, reason TEXT, digests_json TEXT NOT NULL, command_id TEXT, detail_json TEXT NOT NULL,
  at INTEGER NOT NULL, seal TEXT
);
CREATE INDEX countersign_audit_queue_by_tenant ON countersign_audit_queue (tenant, n);`,
  },
  {
    version: 12,
    name: 'proposal rate counters',
    // Proposals made per (tenant, requester, second), and per (tenant, second) under requester '':
    // the rate quota sums at most 61 of them instead of reading every proposal of the last minute.
    // Filled with the last two minutes' proposals so the quota holds across the upgrade. The
    // pending counts get partial indexes that lead with the tenant and end with the expiry: without
    // them SQLite counted from the expiry index, i.e. every tenant's pending proposals.
    sql: `
DROP INDEX countersign_proposals_pending_by_requester;
CREATE INDEX countersign_proposals_pending_by_requester ON countersign_proposals (tenant, requested_by, expires_at) WHERE status = 'pending';
CREATE INDEX countersign_proposals_pending_by_tenant ON countersign_proposals (tenant, expires_at) WHERE status = 'pending';
CREATE TABLE countersign_proposal_rates (
  tenant TEXT NOT NULL, requested_by TEXT NOT NULL, second INTEGER NOT NULL, created INTEGER NOT NULL,
  PRIMARY KEY (tenant, requested_by, second)
) WITHOUT ROWID;
INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created)
  SELECT tenant, requested_by, created_at / 1000, COUNT(*) FROM countersign_proposals
  WHERE created_at >= (CAST(strftime('%s', 'now') AS INTEGER) - 120) * 1000 AND requested_by <> ''
  GROUP BY tenant, requested_by, created_at / 1000;
INSERT INTO countersign_proposal_rates (tenant, requested_by, second, created)
  SELECT tenant, '', created_at / 1000, COUNT(*) FROM countersign_proposals
  WHERE created_at >= (CAST(strftime('%s', 'now') AS INTEGER) - 120) * 1000
  GROUP BY tenant, created_at / 1000;
`,
  },
  {
    version: 13,
    name: 'one chained audit event per id',
    // A queued row copied while it waited and inserted again after it was chained would otherwise
    // be chained a second time; the pass refuses such a row and `verifyAudit` names it.
    sql: 'CREATE UNIQUE INDEX countersign_audit_events_id ON countersign_audit_events (tenant, id);',
  },
  {
    version: 14,
    name: 'finished notification deliveries by age',
    // The dispatcher deletes deliveries finished longer ago than the retention (see
    // Dispatcher.pruneOnce); without it the delete would read every delivery of every tenant.
    sql: "CREATE INDEX countersign_outbox_finished ON countersign_outbox (retry_from) WHERE status <> 'pending';",
  },
  {
    version: 15,
    name: 'sealed grants',
    // With a seal key, each grant row carries an HMAC of every column, written again on each spend
    // and revocation: a grant inserted or widened by hand (cap, expiry, subject, constraints,
    // usage, revocation) no longer approves anything.
    sql: 'ALTER TABLE countersign_grants ADD COLUMN seal TEXT;',
  },
  {
    version: 16,
    name: 'sealed notification deliveries',
    // With a seal key, each delivery row carries an HMAC of what it sends and to whom (tenant, id,
    // channel, event, proposal, payload, creation time): a row inserted or edited by hand is never
    // sent, so the webhook secret never signs a forged event.
    sql: 'ALTER TABLE countersign_outbox ADD COLUMN seal TEXT;',
  },
  {
    version: 17,
    name: 'grant approvals and revocations in the audit',
    // Before a grant approves, the engine counts the approvals and looks for a revocation the audit
    // records of it: a grant row written back to an earlier sealed copy claims fewer. Partial
    // indexes, so only grant approvals and revocations pay for them (a revocation's proposal id is
    // the grant's id). The revocations index names the reason too: with only the step, SQLite
    // read the tenant's whole chain for the lookup.
    sql: `
CREATE INDEX countersign_audit_grant_approvals ON countersign_audit_events (tenant, actor) WHERE reason = 'approved_by_grant';
CREATE INDEX countersign_audit_queue_grant_approvals ON countersign_audit_queue (tenant, actor) WHERE reason = 'approved_by_grant';
CREATE INDEX countersign_audit_grant_revocations ON countersign_audit_events (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked';
CREATE INDEX countersign_audit_queue_grant_revocations ON countersign_audit_queue (tenant, proposal_id) WHERE step = 'revoked' AND reason = 'grant_revoked';
`,
  },
  {
    version: 18,
    name: 'attempts awaiting automatic reconciliation',
    // An attempt left needs_reconciliation keeps in lease_until when the automatic reconciliation
    // next asks the provider (engine.reconcileDue): a partial index, so only those attempts pay for it.
    sql: `
CREATE INDEX countersign_attempts_reconciliation ON countersign_attempts (lease_until) WHERE status = 'needs_reconciliation';
`,
  },
];
