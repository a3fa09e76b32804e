/**
 * The principal directory's tables (migration 10). Portable DDL only (TEXT and
 * BIGINT), so the same statements run on SQLite and PostgreSQL and several servers on one
 * database share tenants, operators, tokens, sessions, login counters and trusted devices.
 * Tokens, session ids and device ids are stored only as SHA-256 hashes. `IF NOT EXISTS`: before
 * this migration the directory created these tables itself, so a database made then already
 * has them.
 */
export const DIRECTORY_TABLES: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS countersign_tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS countersign_operators (
    email TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    roles TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    disabled_at BIGINT
  )`,
  `CREATE TABLE IF NOT EXISTS countersign_api_tokens (
    token_hash TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    tenant TEXT NOT NULL,
    subject TEXT NOT NULL,
    label TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
  )`,
  `CREATE TABLE IF NOT EXISTS countersign_sessions (
    session_hash TEXT PRIMARY KEY,
    tenant TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_seen_at BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS countersign_login_failures (
    limit_key TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    failures BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS countersign_login_devices (
    device_hash TEXT PRIMARY KEY,
    email TEXT NOT NULL,
    created_at BIGINT NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS countersign_oidc_identities (
    issuer TEXT NOT NULL,
    subject TEXT NOT NULL,
    email TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    signed_in_at BIGINT NOT NULL,
    PRIMARY KEY (issuer, subject)
  )`,
  'CREATE INDEX IF NOT EXISTS countersign_sessions_email ON countersign_sessions (email)',
];
