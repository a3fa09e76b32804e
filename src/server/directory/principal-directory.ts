import { auditChainer } from '../../audit/chain.js';
import { ConfigurationError } from '../../canonical/errors.js';
import type { ApproverDirectory } from '../../engine/approver-directory.js';
import { newId } from '../../engine/ids.js';
import type { Clock } from '../../engine/engine-context.js';
import type { Actor } from '../../operation/actor.js';
import type { LocalTransaction } from '../../operation/define-operation.js';
import { escapeHidden } from '../../operation/text-hazards.js';
import { sql } from '../../sql/sql.js';
import { CorruptAuditChainError } from '../../store/store-errors.js';
import type { Store } from '../../store/store.js';
import { AuditLedger } from '../../ledger/audit-ledger.js';
import { forgetExpired, releaseAttempt, reserveAttempt } from './login-limiter.js';
import { dummyPasswordHash, hashPassword, passwordCost, verifyPassword } from './password.js';
import { emailSkeleton, hasInvisibleCharacters, lookalikeOperator } from './confusable-email.js';
import {
  isActiveAdmin,
  OPERATOR_ID,
  type OperatorAccount,
  type OperatorChange,
  type OperatorUpdateResult,
  operatorId,
  type ProviderRoleRemoval,
  rolesOf,
} from './operator-accounts.js';
import { looksLikeSecret, newSecret, secretHash } from './secret-token.js';
import { openForSession, sealForSession } from './session-sealed.js';

/** How long console sessions live and how hard logins are limited. */
export interface DirectoryOptions {
  /** Defaults to the system clock. */
  readonly clock?: Clock;
  /** A session unused this long ends (default 30 minutes). */
  readonly sessionIdleMs?: number;
  /** A session ends this long after login, used or not (default 12 hours). */
  readonly sessionAbsoluteMs?: number;
  /**
   * Sign-in attempts allowed within `windowMs` (default 5, 50, 5, 15 minutes). A browser without a
   * trusted-device cookie for the email is limited per account (`perAccount`, shared by every
   * such browser) and per client address (`perClient`); a trusted device only per device
   * (`perDevice`, default `perAccount`), so nobody who merely knows an operator's email, or
   * shares their proxy, can lock that operator out of a browser they signed in from before.
   */
  readonly loginLimit?: LoginLimit;
  /** A browser stays a trusted device this long after its last successful sign-in (default 30 days). */
  readonly trustedDeviceMs?: number;
  /**
   * scrypt's cost N for new password hashes (default 2^15, OWASP's floor). For test suites that
   * add many operators; a deployment keeps the default. A stored hash carries its own cost.
   */
  readonly passwordCost?: number;
  /**
   * A session opened through an identity provider ends this long after its sign-in (default 1
   * hour), used or not: the console then sends the operator through the provider again, which
   * vouches for their tenant and roles anew.
   */
  readonly providerSessionMaxMs?: number;
  /**
   * The engine's seal key (`createEngine({ sealKey })`), when it has one: the audit events the
   * directory writes (operator changes) are sealed with it like the engine's. Give the directory
   * the same key as the engine, or `countersign audit verify` with the key reports those events
   * `seal_missing` (`countersign serve` passes it).
   */
  readonly sealKey?: string | Uint8Array;
}

/** How many sign-in attempts a window allows; see {@link DirectoryOptions.loginLimit}. */
export interface LoginLimit {
  readonly perAccount: number;
  readonly perClient: number;
  readonly perDevice?: number;
  readonly windowMs: number;
}

/** A trusted-device id for the browser's cookie, issued at each successful sign-in (the old one ends). */
export interface TrustedDevice {
  readonly id: string;
  readonly maxAgeSeconds: number;
}

/** A signed-in operator's console session. `csrfToken` goes into every form the console renders. */
export interface ConsoleSession {
  readonly actor: Actor;
  readonly email: string;
  readonly createdAt: number;
  readonly csrfToken: string;
}

/**
 * What a session cookie's id stands for: a live session; an ended single-sign-on session (past its
 * idle, absolute or provider timeout: `issuer` names the provider to sign in through again); or
 * nothing (unknown, signed out, or its operator disabled, moved or left without a role).
 */
export type SessionLookup =
  | { readonly kind: 'live'; readonly session: ConsoleSession }
  | { readonly kind: 'sso_ended'; readonly issuer: string }
  | { readonly kind: 'none' };

/** What {@link PrincipalDirectory.endSession} ended: a provider's session carries its issuer and ID token. */
export interface EndedSession {
  /** Set when the session was opened through an identity provider. */
  readonly provider?: {
    readonly issuer: string;
    /** The ID token the provider issued at that sign-in, for the logout's `id_token_hint`. */
    readonly idToken: string | undefined;
  };
}

/** The result of a login: a new session (its id goes into the cookie), or why not. */
export type LoginResult =
  | {
      readonly kind: 'signed_in';
      readonly sessionId: string;
      readonly session: ConsoleSession;
      readonly device: TrustedDevice;
    }
  | { readonly kind: 'invalid_credentials' }
  | { readonly kind: 'rate_limited'; readonly retryAfterMs: number };

/**
 * The result of {@link PrincipalDirectory.signInWithProvider}: a new session, or why not.
 * `unknown_tenant`: the tenant is not in the directory. `email_taken`: the email belongs to a
 * password operator or to another identity of the provider. `email_confusable`: the email looks
 * like another operator's (same UTS #39 skeleton: a Cyrillic "а", fullwidth letters).
 * `email_invisible`: the email holds an invisible or format character. `disabled`: the operator
 * was disabled.
 */
export type ProviderSignInResult =
  | {
      readonly kind: 'signed_in';
      readonly sessionId: string;
      readonly session: ConsoleSession;
      /** Whether this sign-in created the operator. */
      readonly provisioned: boolean;
    }
  | {
      readonly kind:
        | 'unknown_tenant'
        | 'email_taken'
        | 'email_confusable'
        | 'email_invisible'
        | 'disabled'
        | 'invalid_roles';
    };

// A password hash that never verifies: operators provisioned by an identity provider sign in
// only through it.
const NO_PASSWORD = 'oidc';

/** An operator as the directory lists it (never with the password hash). */
export interface OperatorInfo {
  readonly email: string;
  readonly tenant: string;
  readonly roles: readonly string[];
}

/**
 * An API token as the directory lists it. Never the secret: `id` is `tok_` and the first 16 hex
 * digits of the stored hash, which names the token without revealing it.
 */
export interface TokenInfo {
  readonly id: string;
  readonly kind: 'agent' | 'operator';
  readonly tenant: string;
  /** `agent:<tenant>-<agent>` for an agent token, the operator's email for an operator token. */
  readonly subject: string;
  readonly label: string;
  readonly createdAt: number;
  readonly revokedAt: number | null;
}

/**
 * Which tokens to revoke: one by its id (`tok_…`, from {@link PrincipalDirectory.tokens}), one by
 * its secret, or every live token of a principal (`agent:acme-assistant`, `user:ada@acme.test`
 * or `ada@acme.test`).
 */
export type TokenSelector =
  | { readonly id: string }
  | { readonly secret: string }
  | { readonly principal: string };

/** The result of {@link PrincipalDirectory.revokeTokens}. */
export type TokenRevocation =
  | { readonly kind: 'revoked'; readonly tokens: readonly TokenInfo[] }
  | { readonly kind: 'not_found' }
  | { readonly kind: 'already_revoked'; readonly token: TokenInfo }
  /** A tenant's audit chain holds an event the server did not write: nothing was revoked. */
  | { readonly kind: 'corrupt_audit_chain'; readonly reason: 'corrupt_audit_chain'; readonly tenant: string };

const TOKEN_ID = /^tok_([0-9a-f]{16})$/;
const tokenIdOf = (hash: string): string => `tok_${hash.slice(0, 16)}`;

function tokenInfo(row: Record<string, unknown>): TokenInfo {
  return {
    id: tokenIdOf(text(row['token_hash'])),
    kind: row['kind'] === 'agent' ? 'agent' : 'operator',
    tenant: text(row['tenant']),
    subject: text(row['subject']),
    label: text(row['label']),
    createdAt: num(row['created_at']),
    revokedAt: row['revoked_at'] === null || row['revoked_at'] === undefined ? null : num(row['revoked_at']),
  };
}

const ROLE = /^[a-z][a-z0-9_-]{0,31}$/;
const TENANT = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}$/;
const DEFAULT_LIMIT: LoginLimit = Object.freeze({ perAccount: 5, perClient: 50, windowMs: 15 * 60_000 });
const DEVICE_TRUST_MS = 30 * 24 * 3_600_000;
// Writing last-seen on every request would turn each page view into a write; a minute is far
// below the idle timeout.
const TOUCH_EVERY_MS = 60_000;

const num = (value: unknown): number => Number(value);
const text = (value: unknown): string => String(value);
const TOKEN_COLUMNS = sql.raw('token_hash, kind, tenant, subject, label, created_at, revoked_at');

/** Normalizes an email for lookup: trimmed, lower case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/**
 * Tenants, operators (scrypt password hashes, roles), agent and operator API tokens, console
 * sessions, sign-in attempt counters and trusted devices, kept in the engine's own store
 * (statements written once with the `sql` tag through `store.transaction(tx => tx.local…)`), so several servers on one
 * database share them, limits included. Only SHA-256 hashes of tokens, session ids and
 * trusted-device ids are stored.
 *
 * @example
 * const directory = new PrincipalDirectory(store);
 * await directory.migrate();
 * await directory.ensureTenant('acme', 'Acme Corp');
 * await directory.addOperator({ tenant: 'acme', email: 'ada@acme.test', password, roles: ['approver'] });
 * const agentToken = await directory.issueAgentToken({ tenant: 'acme' }); // shown once, stored hashed
 */
export class PrincipalDirectory implements ApproverDirectory {
  readonly #store: Store;
  readonly #clock: Clock;
  readonly #idleMs: number;
  readonly #absoluteMs: number;
  readonly #limit: LoginLimit;
  readonly #deviceMs: number;
  readonly #passwordCost: number;
  readonly #providerMs: number;
  readonly #sealKey: string | Uint8Array | undefined;
  /** What an unknown email is checked against, at the cost a real operator's check has. */
  readonly #dummyHash: string;

  /** The audit ledger over this directory's store, chaining with `sealKey`'s chainer. */
  #ledger(sealKey: string | Uint8Array | undefined): AuditLedger {
    return new AuditLedger(this.#store, auditChainer(sealKey));
  }

  constructor(store: Store, options: DirectoryOptions = {}) {
    this.#store = store;
    this.#clock = options.clock ?? { now: () => Date.now() };
    this.#idleMs = options.sessionIdleMs ?? 30 * 60_000;
    this.#absoluteMs = options.sessionAbsoluteMs ?? 12 * 3_600_000;
    this.#limit = options.loginLimit ?? DEFAULT_LIMIT;
    this.#deviceMs = options.trustedDeviceMs ?? DEVICE_TRUST_MS;
    this.#providerMs = options.providerSessionMaxMs ?? 3_600_000;
    this.#sealKey = options.sealKey;
    this.#passwordCost = passwordCost(
      options.passwordCost === undefined ? {} : { cost: options.passwordCost },
    );
    this.#dummyHash = dummyPasswordHash(this.#passwordCost);
    const { perAccount, perClient, perDevice = perAccount, windowMs } = this.#limit;
    const counts = {
      perAccount,
      perClient,
      perDevice,
      windowMs,
      trustedDeviceMs: this.#deviceMs,
      providerSessionMaxMs: this.#providerMs,
    };
    for (const [name, value] of Object.entries(counts))
      if (!Number.isSafeInteger(value) || value < 1)
        throw new ConfigurationError(
          `directory option ${name}: a positive whole number, not ${String(value)}`,
        );
  }

  /**
   * Stores a new console session (the id rotated at every sign-in: the previous one ends) and
   * drops sessions past their idle or absolute timeout. Shared by password and single sign-on.
   */
  async #openSession(
    db: LocalTransaction,
    s: {
      sessionId: string;
      tenant: string;
      email: string;
      now: number;
      previous: string | undefined;
      /** The identity provider's issuer and ID token, for a single-sign-on session. */
      provider?: { issuer: string; idToken: string | undefined };
    },
  ): Promise<void> {
    if (s.previous)
      await db.run(
        sql`DELETE FROM countersign_sessions WHERE session_hash = ${secretHash('session', s.previous)}`,
      );
    await db.run(
      sql`DELETE FROM countersign_sessions WHERE last_seen_at < ${s.now - this.#idleMs} OR created_at < ${s.now - this.#absoluteMs} OR (issuer IS NOT NULL AND created_at <= ${s.now - this.#providerMs})`,
    );
    const issuer = s.provider?.issuer ?? null;
    const idToken =
      s.provider?.idToken === undefined ? null : sealForSession(s.sessionId, 'id_token', s.provider.idToken);
    await db.run(
      sql`INSERT INTO countersign_sessions (session_hash, tenant, email, created_at, last_seen_at, issuer, id_token) VALUES (${secretHash('session', s.sessionId)}, ${s.tenant}, ${s.email}, ${s.now}, ${s.now}, ${issuer}, ${idToken})`,
    );
  }

  #sql<T>(fn: (db: LocalTransaction) => Promise<T>): Promise<T> {
    return this.#store.transaction((tx) => fn(tx.local));
  }

  /**
   * Creates the directory's tables when missing: they are a versioned migration of the store, so
   * this migrates the store. Safe on every start and from several servers.
   */
  async migrate(): Promise<void> {
    await this.#store.migrate();
  }

  /** Adds a tenant unless it exists; returns whether it was added. */
  async ensureTenant(id: string, name = id): Promise<boolean> {
    if (!TENANT.test(id))
      throw new ConfigurationError(`tenant: "${id}" must be lower-case letters, digits, - or _`);
    return this.#sql(async (db) => {
      const result = await db.run(
        sql`INSERT INTO countersign_tenants (id, name, created_at) VALUES (${id}, ${name}, ${this.#clock.now()}) ON CONFLICT (id) DO NOTHING`,
      );
      return result.changes === 1;
    });
  }

  /** The ids of every tenant, sorted. */
  async tenants(): Promise<string[]> {
    const rows = await this.#sql((db) => db.all(sql`SELECT id FROM countersign_tenants ORDER BY id`));
    return rows.map((r) => text(r['id']));
  }

  /**
   * Adds an operator of an existing tenant with a scrypt-hashed password; `exists` when the email
   * is taken. An email holding an invisible character, or looking like another operator's (same
   * UTS #39 skeleton), is a {@link ConfigurationError}.
   */
  async addOperator(input: {
    readonly tenant: string;
    readonly email: string;
    readonly password: string;
    readonly roles: readonly string[];
  }): Promise<{ readonly kind: 'added' | 'exists' }> {
    const email = normalizeEmail(input.email);
    if (hasInvisibleCharacters(input.email))
      throw new ConfigurationError(
        `operator email "${escapeHidden(input.email)}" holds invisible or format characters (email_invisible)`,
      );
    if (!EMAIL.test(email))
      throw new ConfigurationError(`operator email "${input.email}" is not an email address`);
    if (input.password.length < 12) throw new ConfigurationError('operator password: at least 12 characters');
    const bad = input.roles.find((r) => !ROLE.test(r));
    if (bad !== undefined || input.roles.length === 0)
      throw new ConfigurationError(`operator roles: "${bad ?? ''}" is not a role name`);
    const hash = await hashPassword(input.password, { cost: this.#passwordCost });
    return this.#sql(async (db) => {
      const tenant = await db.all(sql`SELECT id FROM countersign_tenants WHERE id = ${input.tenant}`);
      if (tenant.length === 0) throw new ConfigurationError(`operator ${email}: no tenant "${input.tenant}"`);
      // An operator already there stays `exists` (setup code adds its operators at every start),
      // even beside a look-alike stored before skeletons were.
      const same = await db.all(sql`SELECT email FROM countersign_operators WHERE email = ${email}`);
      if (same.length > 0) return { kind: 'exists' };
      const lookalike = await lookalikeOperator(db, email);
      if (lookalike !== undefined) throw confusable(email, lookalike);
      // No conflict target: a concurrent look-alike (same skeleton) is not inserted either.
      const result = await db.run(
        sql`INSERT INTO countersign_operators (email, tenant, password_hash, roles, created_at, disabled_at, email_skeleton) VALUES (${email}, ${input.tenant}, ${hash}, ${[...new Set(input.roles)].join(',')}, ${this.#clock.now()}, NULL, ${emailSkeleton(email)}) ON CONFLICT DO NOTHING`,
      );
      if (result.changes === 1) return { kind: 'added' };
      const raced = await lookalikeOperator(db, email);
      if (raced !== undefined) throw confusable(email, raced);
      return { kind: 'exists' };
    });
  }

  /** The operators of a tenant, by email. */
  async operators(tenant: string): Promise<OperatorInfo[]> {
    const rows = await this.#sql((db) =>
      db.all(
        sql`SELECT email, tenant, roles FROM countersign_operators WHERE tenant = ${tenant} AND disabled_at IS NULL ORDER BY email`,
      ),
    );
    return rows.map((r) => ({
      email: text(r['email']),
      tenant: text(r['tenant']),
      roles: rolesOf(text(r['roles'])),
    }));
  }

  /**
   * Issues a bearer token for an agent of a tenant: it proposes as `agent:<tenant>-<agent>`.
   * Returned once; only its hash is stored.
   */
  async issueAgentToken(input: {
    readonly tenant: string;
    readonly agent?: string;
    readonly label?: string;
  }): Promise<string> {
    const agent = input.agent ?? 'assistant';
    if (!ROLE.test(agent))
      throw new ConfigurationError(`agent name "${agent}" must be lower-case letters, digits, - or _`);
    return this.#issue('agent', input.tenant, `agent:${input.tenant}-${agent}`, input.label ?? agent);
  }

  /** Issues an API bearer token acting as an existing operator (with that operator's current roles). */
  async issueOperatorToken(input: { readonly email: string; readonly label?: string }): Promise<string> {
    const email = normalizeEmail(input.email);
    const rows = await this.#sql((db) =>
      db.all(sql`SELECT tenant FROM countersign_operators WHERE email = ${email}`),
    );
    const row = rows[0];
    if (!row) throw new ConfigurationError(`no operator ${email}`);
    return this.#issue('operator', text(row['tenant']), email, input.label ?? 'api');
  }

  async #issue(kind: 'agent' | 'operator', tenant: string, subject: string, label: string): Promise<string> {
    const token = newSecret(kind);
    await this.#sql(async (db) => {
      const known = await db.all(sql`SELECT id FROM countersign_tenants WHERE id = ${tenant}`);
      if (known.length === 0) throw new ConfigurationError(`token: no tenant "${tenant}"`);
      await db.run(
        sql`INSERT INTO countersign_api_tokens (token_hash, kind, tenant, subject, label, created_at, revoked_at) VALUES (${secretHash('token', token)}, ${kind}, ${tenant}, ${subject}, ${label}, ${this.#clock.now()}, NULL)`,
      );
    });
    return token;
  }

  /** Revokes a token; returns whether it was live. */
  async revokeToken(token: string): Promise<boolean> {
    return this.#sql(async (db) => {
      const result = await db.run(
        sql`UPDATE countersign_api_tokens SET revoked_at = ${this.#clock.now()} WHERE token_hash = ${secretHash('token', token)} AND revoked_at IS NULL`,
      );
      return result.changes === 1;
    });
  }

  /** Every API token (live and revoked), oldest first; of one tenant when given. Never the secrets. */
  async tokens(filter: { readonly tenant?: string } = {}): Promise<TokenInfo[]> {
    const rows = await this.#sql((db) =>
      filter.tenant === undefined
        ? db.all(sql`SELECT ${TOKEN_COLUMNS} FROM countersign_api_tokens ORDER BY created_at, token_hash`)
        : db.all(
            sql`SELECT ${TOKEN_COLUMNS} FROM countersign_api_tokens WHERE tenant = ${filter.tenant} ORDER BY created_at, token_hash`,
          ),
    );
    return rows.map(tokenInfo);
  }

  /**
   * Revokes one token (by id or secret) or every live token of a principal, in one transaction:
   * from the commit on, the server answers those tokens 401 `unauthenticated`. Each revoked token
   * is audited in its tenant's hash chain (step `revoked`, the token id in place of a proposal id,
   * `actor` as the one who revoked it), sealed with `sealKey` when the server seals its events.
   * When a tenant's chain holds an event the server did not write where the next one goes, nothing
   * is revoked: `corrupt_audit_chain` (`countersign audit verify` names the event).
   *
   * @example
   * await directory.revokeTokens({ principal: 'agent:acme-assistant' }, { actor: 'system:cli' });
   */
  async revokeTokens(
    selector: TokenSelector,
    options: { readonly actor: string; readonly sealKey?: string | undefined },
  ): Promise<TokenRevocation> {
    try {
      return await this.#revokeTokens(selector, options);
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      return { kind: 'corrupt_audit_chain', reason: 'corrupt_audit_chain', tenant: error.tenant };
    }
  }

  async #revokeTokens(
    selector: TokenSelector,
    options: { readonly actor: string; readonly sealKey?: string | undefined },
  ): Promise<TokenRevocation> {
    const now = this.#clock.now();
    return this.#ledger(options.sealKey).transaction(async (tx, audit): Promise<TokenRevocation> => {
      const db = tx.local;
      let rows: readonly Record<string, unknown>[];
      if ('principal' in selector) {
        const principal = selector.principal.trim();
        const subject = principal.startsWith('agent:')
          ? principal
          : normalizeEmail(principal.replace(/^user:/, ''));
        rows = await db.all(
          sql`SELECT ${TOKEN_COLUMNS} FROM countersign_api_tokens WHERE subject = ${subject} AND revoked_at IS NULL ORDER BY created_at, token_hash`,
        );
      } else {
        const hash =
          'secret' in selector ? secretHash('token', selector.secret) : TOKEN_ID.exec(selector.id)?.[1];
        if (hash === undefined) return { kind: 'not_found' };
        // The id is 16 validated hex digits, so the pattern holds no wildcard of the caller's.
        const matches = await db.all(
          sql`SELECT ${TOKEN_COLUMNS} FROM countersign_api_tokens WHERE token_hash LIKE ${`${hash.slice(0, 16)}%`} ORDER BY token_hash`,
        );
        const exact = 'secret' in selector ? matches.filter((r) => r['token_hash'] === hash) : matches;
        if (exact.length !== 1) return { kind: 'not_found' };
        const only = tokenInfo(exact[0]!);
        if (only.revokedAt !== null) return { kind: 'already_revoked', token: only };
        rows = exact;
      }
      if (rows.length === 0) return { kind: 'not_found' };
      const revoked: TokenInfo[] = [];
      for (const row of rows) {
        const result = await db.run(
          sql`UPDATE countersign_api_tokens SET revoked_at = ${now} WHERE token_hash = ${row['token_hash']} AND revoked_at IS NULL`,
        );
        if (result.changes !== 1) continue;
        const token = { ...tokenInfo(row), revokedAt: now };
        revoked.push(token);
        audit.append({
          tenant: token.tenant,
          proposalId: token.id,
          attemptId: null,
          runId: '-',
          step: 'revoked',
          actor: options.actor,
          reason: null,
          digests: {},
          commandId: null,
          detail: { token: token.kind, subject: token.subject, label: token.label },
          at: now,
          id: newId('evt'),
        });
      }
      return revoked.length === 0 ? { kind: 'not_found' } : { kind: 'revoked', tokens: revoked };
    });
  }

  /** The principal a bearer token stands for, or undefined (unknown, revoked, or its operator disabled). */
  async authenticateBearer(token: string): Promise<Actor | undefined> {
    if (!looksLikeSecret(token) || !/^cs_(agent|op)_/.test(token)) return undefined;
    const rows = await this.#sql((db) =>
      db.all(sql`SELECT t.kind, t.tenant, t.subject, o.roles, o.tenant AS operator_tenant, o.disabled_at
           FROM countersign_api_tokens t LEFT JOIN countersign_operators o ON t.kind = 'operator' AND o.email = t.subject
          WHERE t.token_hash = ${secretHash('token', token)} AND t.revoked_at IS NULL`),
    );
    const row = rows[0];
    if (!row) return undefined;
    const tenant = text(row['tenant']);
    if (row['kind'] === 'agent')
      return Object.freeze({ kind: 'agent', id: text(row['subject']), tenant, roles: Object.freeze([]) });
    // An operator without a role (the provider took every one) has no powers at all.
    if (
      row['roles'] === null ||
      row['roles'] === undefined ||
      rolesOf(text(row['roles'])).length === 0 ||
      row['disabled_at'] !== null ||
      row['operator_tenant'] !== tenant
    )
      return undefined;
    return operatorActor(text(row['subject']), tenant, text(row['roles']));
  }

  /**
   * Signs an operator in. First takes an attempt slot, atomically and before the password is
   * looked at: from a trusted device of this email (its `device` id, issued at an earlier
   * sign-in) a slot of that device's own limit; from any other browser a slot of the account's
   * limit for untrusted browsers and one of the client address's. So N concurrent guesses check
   * at most the limit, and failures from other browsers never lock out a trusted device. Then
   * checks the password (in constant time, also for unknown emails). A failure keeps its slot;
   * a success gives it back, ends `previousSessionId` (the session id rotates at every login),
   * opens a new session and issues a new trusted-device id for this browser (the old one ends).
   */
  async login(input: {
    readonly email: string;
    readonly password: string;
    readonly client: string;
    readonly previousSessionId?: string | undefined;
    /** The browser's trusted-device id, if it has one. */
    readonly device?: string | undefined;
  }): Promise<LoginResult> {
    const email = normalizeEmail(input.email).slice(0, 320);
    const now = this.#clock.now();
    const { windowMs } = this.#limit;
    const deviceHash =
      input.device !== undefined && looksLikeSecret(input.device) && input.device.startsWith('cs_dev_')
        ? secretHash('device', input.device)
        : undefined;
    const reserved = await this.#sql(async (db) => {
      const trusted =
        deviceHash !== undefined &&
        (
          await db.all(
            sql`SELECT email FROM countersign_login_devices WHERE device_hash = ${deviceHash} AND email = ${email} AND created_at > ${now - this.#deviceMs}`,
          )
        ).length === 1;
      const keys = trusted
        ? [{ key: `device:${deviceHash}`, max: this.#limit.perDevice ?? this.#limit.perAccount }]
        : [
            { key: `account:${email}`, max: this.#limit.perAccount },
            { key: `client:${input.client.slice(0, 100)}`, max: this.#limit.perClient },
          ];
      return reserveAttempt(db, keys, now, windowMs);
    });
    if (reserved.kind === 'rate_limited') return reserved;
    const rows = await this.#sql((db) =>
      db.all(
        sql`SELECT tenant, password_hash, roles FROM countersign_operators WHERE email = ${email} AND disabled_at IS NULL`,
      ),
    );
    const row = rows[0];
    // An unknown email and a single-sign-on operator (no password) cost one scrypt like any other,
    // so the answer's timing does not tell which emails exist or sign in through a provider.
    const stored = row ? text(row['password_hash']) : NO_PASSWORD;
    const ok =
      (await verifyPassword(input.password, stored === NO_PASSWORD ? this.#dummyHash : stored)) &&
      stored !== NO_PASSWORD;
    // A failure keeps the slot it reserved: that slot is the failure count.
    if (!ok || !row) return { kind: 'invalid_credentials' };
    const sessionId = newSecret('session');
    const deviceId = newSecret('device');
    const tenant = text(row['tenant']);
    await this.#sql(async (db) => {
      await releaseAttempt(db, reserved.reservation);
      if (deviceHash !== undefined)
        await db.run(sql`DELETE FROM countersign_login_devices WHERE device_hash = ${deviceHash}`);
      await db.run(sql`DELETE FROM countersign_login_devices WHERE created_at <= ${now - this.#deviceMs}`);
      await db.run(
        sql`INSERT INTO countersign_login_devices (device_hash, email, created_at) VALUES (${secretHash('device', deviceId)}, ${email}, ${now})`,
      );
      await this.#openSession(db, { sessionId, tenant, email, now, previous: input.previousSessionId });
    });
    // On its own: a range delete inside the transaction above, which holds this attempt's
    // counter rows, could wait in a cycle with another sign-in's reservation.
    await this.#sql((db) => forgetExpired(db, now, windowMs));
    const session: ConsoleSession = {
      actor: operatorActor(email, tenant, text(row['roles'])),
      email,
      createdAt: now,
      csrfToken: secretHash('csrf', sessionId),
    };
    const device = { id: deviceId, maxAgeSeconds: Math.floor(this.#deviceMs / 1000) };
    return { kind: 'signed_in', sessionId, session, device };
  }

  /**
   * The live session for a cookie's session id, or undefined when unknown, idle longer than the
   * idle timeout, older than the absolute timeout (or, opened through an identity provider, older
   * than `providerSessionMaxMs`), or its operator was disabled, moved or left without a role.
   * `touch: false` checks without counting as activity (an open event stream is no operator at
   * the keyboard, so it must not hold an idle session open).
   */
  async resolveSession(
    sessionId: string,
    options: { readonly touch?: boolean } = {},
  ): Promise<ConsoleSession | undefined> {
    const found = await this.lookupSession(sessionId, options);
    return found.kind === 'live' ? found.session : undefined;
  }

  /**
   * Like {@link resolveSession}, and says when a single-sign-on session ended by time, so the
   * console can send the operator through their provider again instead of to the login page.
   * Every request reads the operator's roles and state anew: a change takes effect at once.
   */
  async lookupSession(sessionId: string, options: { readonly touch?: boolean } = {}): Promise<SessionLookup> {
    if (!looksLikeSecret(sessionId) || !sessionId.startsWith('cs_sess_')) return { kind: 'none' };
    const hash = secretHash('session', sessionId);
    const now = this.#clock.now();
    return this.#sql(async (db): Promise<SessionLookup> => {
      const rows =
        await db.all(sql`SELECT s.tenant, s.email, s.created_at, s.last_seen_at, s.issuer, o.roles, o.tenant AS operator_tenant, o.disabled_at
           FROM countersign_sessions s LEFT JOIN countersign_operators o ON o.email = s.email
          WHERE s.session_hash = ${hash}`);
      const row = rows[0];
      if (!row) return { kind: 'none' };
      const createdAt = num(row['created_at']);
      const lastSeen = num(row['last_seen_at']);
      const tenant = text(row['tenant']);
      const issuer = row['issuer'] === null || row['issuer'] === undefined ? undefined : text(row['issuer']);
      const timely =
        now - lastSeen < this.#idleMs &&
        now - createdAt < this.#absoluteMs &&
        (issuer === undefined || now - createdAt < this.#providerMs);
      const standing =
        row['roles'] !== null &&
        row['roles'] !== undefined &&
        rolesOf(text(row['roles'])).length > 0 &&
        row['disabled_at'] === null &&
        row['operator_tenant'] === tenant;
      if (!timely || !standing) {
        await db.run(sql`DELETE FROM countersign_sessions WHERE session_hash = ${hash}`);
        return standing && issuer !== undefined ? { kind: 'sso_ended', issuer } : { kind: 'none' };
      }
      if (options.touch !== false && now - lastSeen >= TOUCH_EVERY_MS)
        await db.run(sql`UPDATE countersign_sessions SET last_seen_at = ${now} WHERE session_hash = ${hash}`);
      const email = text(row['email']);
      return {
        kind: 'live',
        session: {
          actor: operatorActor(email, tenant, text(row['roles'])),
          email,
          createdAt,
          csrfToken: secretHash('csrf', sessionId),
        },
      };
    });
  }

  /**
   * Signs in an operator an OpenID provider vouched for (its ID token already verified), in one
   * transaction: the identity (issuer, subject) is bound to an operator at its first sign-in,
   * which is created with the email, tenant and roles the claims map to (no password: it signs
   * in only through the provider); at every later sign-in its tenant and roles are set from the
   * claims again. An email a password operator or another identity holds is refused, never
   * taken over. Then, like {@link login}, ends `previousSessionId` and opens a new session.
   */
  async signInWithProvider(input: {
    readonly issuer: string;
    readonly subject: string;
    readonly email: string;
    readonly tenant: string;
    readonly roles: readonly string[];
    readonly previousSessionId?: string | undefined;
    /** The verified ID token, kept encrypted with the session for the logout's `id_token_hint`. */
    readonly idToken?: string | undefined;
  }): Promise<ProviderSignInResult> {
    const now = this.#clock.now();
    if (!TENANT.test(input.tenant)) return { kind: 'unknown_tenant' };
    const roles = [...new Set(input.roles)];
    if (roles.length === 0 || roles.some((r) => !ROLE.test(r))) return { kind: 'invalid_roles' };
    if (hasInvisibleCharacters(input.email)) return { kind: 'email_invisible' };
    const claimed = normalizeEmail(input.email);
    if (!EMAIL.test(claimed)) return { kind: 'email_taken' };
    const sessionId = newSecret('session');
    const result = await this.#sql(
      async (db): Promise<ProviderSignInResult | { email: string; provisioned: boolean }> => {
        const tenant = await db.all(sql`SELECT id FROM countersign_tenants WHERE id = ${input.tenant}`);
        if (tenant.length === 0) return { kind: 'unknown_tenant' };
        const known = await db.all(
          sql`SELECT email FROM countersign_oidc_identities WHERE issuer = ${input.issuer} AND subject = ${input.subject}`,
        );
        let email: string;
        let provisioned = false;
        if (known[0]) {
          email = text(known[0]['email']);
        } else {
          email = claimed;
          if ((await lookalikeOperator(db, email)) !== undefined) return { kind: 'email_confusable' };
          const added = await db.run(
            sql`INSERT INTO countersign_operators (email, tenant, password_hash, roles, created_at, disabled_at, email_skeleton) VALUES (${email}, ${input.tenant}, ${NO_PASSWORD}, ${roles.join(',')}, ${now}, NULL, ${emailSkeleton(email)}) ON CONFLICT DO NOTHING`,
          );
          if (added.changes !== 1)
            return {
              kind: (await lookalikeOperator(db, email)) !== undefined ? 'email_confusable' : 'email_taken',
            };
          await db.run(
            sql`INSERT INTO countersign_oidc_identities (issuer, subject, email, created_at, signed_in_at) VALUES (${input.issuer}, ${input.subject}, ${email}, ${now}, ${now}) ON CONFLICT DO NOTHING`,
          );
          provisioned = true;
        }
        const operator = await db.all(
          sql`SELECT disabled_at FROM countersign_operators WHERE email = ${email}`,
        );
        if (!operator[0]) return { kind: 'email_taken' };
        if (operator[0]['disabled_at'] !== null && operator[0]['disabled_at'] !== undefined)
          return { kind: 'disabled' };
        await db.run(
          sql`UPDATE countersign_operators SET tenant = ${input.tenant}, roles = ${roles.join(',')} WHERE email = ${email}`,
        );
        await db.run(
          sql`UPDATE countersign_oidc_identities SET signed_in_at = ${now} WHERE issuer = ${input.issuer} AND subject = ${input.subject}`,
        );
        await this.#openSession(db, {
          sessionId,
          tenant: input.tenant,
          email,
          now,
          previous: input.previousSessionId,
          provider: { issuer: input.issuer, idToken: input.idToken },
        });
        return { email, provisioned };
      },
    );
    if ('kind' in result) return result;
    const session: ConsoleSession = {
      actor: operatorActor(result.email, input.tenant, roles.join(',')),
      email: result.email,
      createdAt: now,
      csrfToken: secretHash('csrf', sessionId),
    };
    return { kind: 'signed_in', sessionId, session, provisioned: result.provisioned };
  }

  /** Whether an operator signs in through an OpenID provider (bound to an identity of `issuer`). */
  async isProviderOperator(email: string, issuer: string): Promise<boolean> {
    const rows = await this.#sql((db) =>
      db.all(
        sql`SELECT subject FROM countersign_oidc_identities WHERE email = ${normalizeEmail(email)} AND issuer = ${issuer}`,
      ),
    );
    return rows.length > 0;
  }

  /**
   * The active operators of `tenant` among `ids` (`user:<email>`), read in the caller's
   * transaction: what an approval completing a quorum re-checks earlier approvers against
   * ({@link ApproverDirectory}).
   */
  async current(
    db: LocalTransaction,
    tenant: string,
    ids: readonly string[],
  ): Promise<ReadonlyMap<string, Actor>> {
    const found = new Map<string, Actor>();
    for (const id of ids) {
      if (!id.startsWith('user:')) continue;
      const email = id.slice('user:'.length);
      const rows = await db.all(
        sql`SELECT roles FROM countersign_operators WHERE email = ${email} AND tenant = ${tenant} AND disabled_at IS NULL`,
      );
      const row = rows[0];
      if (row) found.set(id, operatorActor(email, tenant, text(row['roles'])));
    }
    return found;
  }

  /**
   * Ends a session (logout). A session opened through an identity provider answers its issuer and
   * the ID token of that sign-in (opened with the session id, which only the cookie holds), so
   * the logout can pass the provider its `id_token_hint`.
   */
  async endSession(sessionId: string): Promise<EndedSession> {
    const hash = secretHash('session', sessionId);
    const rows = await this.#sql(async (db) => {
      const found = await db.all(
        sql`SELECT issuer, id_token FROM countersign_sessions WHERE session_hash = ${hash}`,
      );
      await db.run(sql`DELETE FROM countersign_sessions WHERE session_hash = ${hash}`);
      return found;
    });
    const row = rows[0];
    if (!row || row['issuer'] === null || row['issuer'] === undefined) return {};
    const sealed = row['id_token'];
    const idToken = typeof sealed === 'string' ? openForSession(sessionId, 'id_token', sealed) : undefined;
    return { provider: { issuer: text(row['issuer']), idToken } };
  }

  /**
   * Every operator of a tenant, active and disabled, by email: roles, state, creation time, and
   * whether they sign in through an identity provider. Never a password hash.
   */
  async operatorAccounts(tenant: string): Promise<OperatorAccount[]> {
    const rows = await this.#sql((db) => this.#accountRows(db, tenant));
    return rows.map(accountOf);
  }

  #accountRows(db: LocalTransaction, tenant: string): Promise<readonly Record<string, unknown>[]> {
    return db.all(
      sql`SELECT o.email, o.tenant, o.roles, o.created_at, o.disabled_at,
                 (SELECT COUNT(*) FROM countersign_oidc_identities i WHERE i.email = o.email) AS identities
            FROM countersign_operators o WHERE o.tenant = ${tenant} ORDER BY o.email`,
    );
  }

  /**
   * Changes an operator of `tenant` (by {@link OperatorAccount.id}) as `actor`, an admin of that
   * tenant: enables or disables them, or sets their roles (one to ten role names). In one
   * transaction with the tenant's operator changes serialized: a change that would leave the
   * tenant without an active admin is refused (`last_admin`), so no admin demotes or disables
   * the last one, themselves included; disabling ends the operator's sessions; the change is
   * audited in the tenant's hash chain (step `operator_changed`, the operator id in place of a
   * proposal id, `actor` the admin). Sessions and tokens read roles and state at every request,
   * so the change holds from the next request on.
   *
   * @example
   * await directory.updateOperator({ tenant: 'acme', id: 'op_…', change: { active: false }, actor });
   */
  async updateOperator(input: {
    readonly tenant: string;
    readonly id: string;
    readonly change: OperatorChange;
    readonly actor: Actor;
  }): Promise<OperatorUpdateResult> {
    const { tenant, actor, change } = input;
    if (actor.kind !== 'operator' || actor.tenant !== tenant || !actor.roles.includes('admin'))
      return {
        kind: 'refused',
        reason: 'forbidden',
        message: 'only an admin of the tenant manages its operators',
      };
    const roles = change.roles === undefined ? undefined : [...new Set(change.roles)];
    if (roles !== undefined && (roles.length === 0 || roles.length > 10 || roles.some((r) => !ROLE.test(r))))
      return {
        kind: 'refused',
        reason: 'invalid_request',
        message: '$.roles: one to ten role names (lower-case letters, digits, - or _)',
      };
    const notFound = { kind: 'refused', reason: 'not_found', message: 'no such operator' } as const;
    if (!OPERATOR_ID.test(input.id)) return notFound;
    const now = this.#clock.now();
    try {
      return await this.#ledger(this.#sealKey).transaction(
        async (tx, audit): Promise<OperatorUpdateResult> => {
          const db = tx.local;
          // Takes the tenant's row lock first (PostgreSQL; SQLite writes one at a time anyway): two
          // admins demoting each other at once cannot both see the other still standing.
          await db.run(sql`UPDATE countersign_tenants SET name = name WHERE id = ${tenant}`);
          const accounts = (await this.#accountRows(db, tenant)).map(accountOf);
          const before = accounts.find((a) => a.id === input.id);
          if (!before) return notFound;
          const after: OperatorAccount = {
            ...before,
            roles: roles ?? before.roles,
            active: change.active ?? before.active,
            disabledAt: (change.active ?? before.active) ? null : (before.disabledAt ?? now),
          };
          const sameRoles = after.roles.join(',') === before.roles.join(',');
          if (sameRoles && after.active === before.active)
            return { kind: 'updated', operator: before, changed: false };
          if (!accounts.some((a) => isActiveAdmin(a.id === after.id ? after : a)))
            return {
              kind: 'refused',
              reason: 'last_admin',
              message:
                'the tenant would be left without an active admin; make another operator an admin first',
            };
          await db.run(
            sql`UPDATE countersign_operators SET roles = ${after.roles.join(',')}, disabled_at = ${after.disabledAt} WHERE email = ${after.email} AND tenant = ${tenant}`,
          );
          if (!after.active) await db.run(sql`DELETE FROM countersign_sessions WHERE email = ${after.email}`);
          audit.append({
            tenant,
            proposalId: after.id,
            attemptId: null,
            runId: '-',
            step: 'operator_changed',
            actor: actor.id,
            reason: null,
            digests: {},
            commandId: null,
            detail: {
              operator: after.email,
              ...(sameRoles ? {} : { roles: { from: before.roles, to: after.roles } }),
              ...(after.active === before.active
                ? {}
                : { active: { from: before.active, to: after.active } }),
            },
            at: now,
            id: newId('evt'),
          });
          return { kind: 'updated', operator: after, changed: true };
        },
      );
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      return {
        kind: 'refused',
        reason: 'corrupt_audit_chain',
        message: `the audit chain of ${error.tenant} holds an event the server did not write: nothing changed`,
      };
    }
  }

  /**
   * The identity provider no longer gives an identity a console role (or a tenant): its operator
   * keeps no role and every session of theirs ends, in one transaction, audited in their tenant
   * (step `operator_changed`, actor `system:sso`). Their API tokens stop working too, since an
   * operator without a role has no powers; a later sign-in with roles sets them again. Powers end
   * even when the tenant's audit chain is corrupt (then unaudited: `audited: false`).
   */
  async removeProviderRoles(input: {
    readonly issuer: string;
    readonly subject: string;
  }): Promise<ProviderRoleRemoval> {
    const remove = (audited: boolean) =>
      this.#ledger(this.#sealKey).transaction(async (tx, audit): Promise<ProviderRoleRemoval> => {
        const db = tx.local;
        const rows = await db.all(
          sql`SELECT o.email, o.tenant, o.roles FROM countersign_oidc_identities i JOIN countersign_operators o ON o.email = i.email WHERE i.issuer = ${input.issuer} AND i.subject = ${input.subject}`,
        );
        const row = rows[0];
        if (!row) return { kind: 'unknown_identity' };
        const email = text(row['email']);
        const tenant = text(row['tenant']);
        const from = rolesOf(text(row['roles']));
        await db.run(sql`UPDATE countersign_operators SET roles = '' WHERE email = ${email}`);
        const ended = await db.run(sql`DELETE FROM countersign_sessions WHERE email = ${email}`);
        const now = this.#clock.now();
        if (audited && from.length > 0)
          audit.append({
            tenant,
            proposalId: operatorId(email),
            attemptId: null,
            runId: '-',
            step: 'operator_changed',
            actor: 'system:sso',
            reason: null,
            digests: {},
            commandId: null,
            detail: { operator: email, roles: { from, to: [] }, issuer: input.issuer },
            at: now,
            id: newId('evt'),
          });
        return { kind: 'removed', email, tenant, sessionsEnded: ended.changes, audited };
      });
    try {
      return await remove(true);
    } catch (error) {
      if (!(error instanceof CorruptAuditChainError)) throw error;
      return remove(false);
    }
  }
}

function accountOf(row: Record<string, unknown>): OperatorAccount {
  const email = text(row['email']);
  const disabledAt =
    row['disabled_at'] === null || row['disabled_at'] === undefined ? null : num(row['disabled_at']);
  return {
    id: operatorId(email),
    email,
    tenant: text(row['tenant']),
    roles: rolesOf(text(row['roles'])),
    active: disabledAt === null,
    createdAt: num(row['created_at']),
    disabledAt,
    sso: num(row['identities']) > 0,
  };
}

function confusable(email: string, lookalike: string): ConfigurationError {
  return new ConfigurationError(
    `operator email "${email}" looks like the existing operator ${lookalike} (email_confusable)`,
  );
}

function operatorActor(email: string, tenant: string, roles: string): Actor {
  return Object.freeze({
    kind: 'operator',
    id: `user:${email}`,
    tenant,
    roles: Object.freeze(roles.split(',').filter(Boolean)),
  });
}
