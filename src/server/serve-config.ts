import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { ConfigurationError } from '../canonical/errors.js';
import type { McpHttpOptions } from '../adapters/mcp/mcp-http-handler.js';
import type { ProposalLimitsOption } from '../engine/proposal-quota.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { AnyReadTool } from '../operation/define-read-tool.js';
import type { Store } from '../store/store.js';
import type { DirectoryOptions, PrincipalDirectory } from './directory/principal-directory.js';
import { checkOidcConfig, type OidcConfig } from './auth/oidc.js';
import { checkNotifications, type NotificationsConfig } from '../notify/notify-config.js';

/** How `countersign serve` authenticates operators and agents. Every field is optional. */
export interface AuthenticationConfig {
  /** A console session unused this long ends (default 30 minutes). */
  readonly sessionIdleMs?: number;
  /** A console session ends this long after login (default 12 hours). */
  readonly sessionAbsoluteMs?: number;
  /** Sign-in attempts allowed per account and client address (untrusted browsers) and per trusted device, within `windowMs`. */
  readonly loginLimit?: DirectoryOptions['loginLimit'];
  /** A browser stays a trusted device this long after its last sign-in (default 30 days). */
  readonly trustedDeviceMs?: number;
  /**
   * A console session opened through the identity provider ends this long after its sign-in
   * (default 1 hour); the console then sends the operator through the provider again, which
   * vouches for their tenant and roles anew.
   */
  readonly providerSessionMaxMs?: number;
  /**
   * The URL operators reach the server at, e.g. `https://approvals.example.com`, when it is behind
   * a proxy (approval links, Origin check, cookie security). Without it, approval links handed to
   * agents name the listen address (`http://127.0.0.1:8787`), never the request's `Host` header.
   */
  readonly publicUrl?: string;
  /**
   * Roles that may decide (default `['approver', 'admin']`). The one setting: it configures the
   * engine, and the console and API ask the engine (`engine.proposals.mayDecide`).
   */
  readonly approverRoles?: readonly string[];
  /**
   * Lets the operator who edited a proposal approve the new one, for every operation (default
   * false: the proposer and the editor never approve). Each such approval is audited.
   */
  readonly allowEditorApproval?: boolean;
  /**
   * Console single sign-on through an OpenID provider: "Sign in with SSO" on the login page,
   * operators provisioned at their first sign-in with the tenant and roles their claims map to.
   */
  readonly oidc?: OidcConfig;
  /** Whether operators may sign in with a password (default true; false refuses POST /login). */
  readonly password?: boolean;
  /**
   * Runs at every start, after the directory's tables exist: create your tenants, operators and
   * tokens here (idempotently: `ensureTenant`, `addOperator` answers `exists` for a known email).
   */
  readonly setup?: (directory: PrincipalDirectory) => Promise<void>;
}

/** Limits of the MCP endpoint of `countersign serve --mcp`. Every field is optional (a whole number above 0). */
export type McpServeConfig = Pick<
  McpHttpOptions,
  'maxSessions' | 'maxSessionsPerTenant' | 'maxSessionsPerAgent' | 'idleMs' | 'maxBodyBytes'
>;

const MCP_LIMITS = [
  'maxSessions',
  'maxSessionsPerTenant',
  'maxSessionsPerAgent',
  'idleMs',
  'maxBodyBytes',
] as const;

/**
 * Deadlines of `countersign serve`, each a whole number of ms above 0 (docs/server.md, "Operating
 * countersign", gives the trade-offs).
 */
export interface ServeTimeouts {
  /** PostgreSQL: opening a connection, or waiting for a free one (default 5 000). */
  readonly connectMs?: number;
  /** PostgreSQL: one statement, lock waits included (default 10 000). */
  readonly statementMs?: number;
  /** A whole request before it is answered 503 `store_unavailable` (default 15 000). */
  readonly requestMs?: number;
  /** How long SIGTERM lets in-flight requests finish before closing their connections (default 10 000). */
  readonly drainMs?: number;
}

const TIMEOUTS = ['connectMs', 'statementMs', 'requestMs', 'drainMs'] as const;

/**
 * Leases, the recovery sweep and automatic reconciliation of `countersign serve`. Durations are
 * `500ms`, `30s`, `2m`, `1h` or milliseconds; the flags `--lease` and `--sweep-interval` win.
 *
 * @example
 * recovery: { lease: '30s', sweepInterval: '10s', reconcile: { first: '10s', max: '10m' } }
 */
export interface RecoveryConfig {
  /**
   * How long a claimed attempt may run before another server's sweep may take it over (default
   * `1m`, at least `1s`). Shorter: a crashed worker's work is taken over sooner. Longer: a slow
   * provider call is not taken over while it still runs.
   */
  readonly lease?: string | number;
  /** How often the expiry, recovery, reconciliation, escalation and reminder sweep runs (default `15s`, at most the lease). */
  readonly sweepInterval?: string | number;
  /**
   * The automatic reconciliation of `needs_reconciliation` proposals: the first try `first` after
   * the attempt was left (default `10s`), then after as long again as it has waited, up to `max`
   * between tries (default `10m`). `false`: only an operator reconciles.
   */
  readonly reconcile?:
    | false
    | { readonly first?: string | number | undefined; readonly max?: string | number | undefined };
  /**
   * Attempts per proposal before recovery parks one that never reached its effect or its provider
   * (a proposal whose execution itself kills the process) as `terminal_failure` for an operator
   * (default 10). Each takeover follows a lost worker, so a process killed again and again for
   * other reasons (a crash loop, a node drained repeatedly) uses them up too: keep it well above
   * the restarts you expect while one proposal is in flight.
   */
  readonly maxAttempts?: number;
  /**
   * How long before a pending proposal expires its approvers are reminded, once, through the
   * notifications (default `5m`; only with notifications configured). `false`: no reminders.
   */
  readonly remindBefore?: string | number | false;
}

const DURATION = z.union([
  z.string().regex(/^\d+(ms|s|m|h|d)$/, 'must be a duration like 500ms, 30s, 2m or 1h'),
  z.number().int().positive('must be a positive whole number of milliseconds'),
]);

const RECOVERY = z.strictObject({
  lease: DURATION.optional(),
  sweepInterval: DURATION.optional(),
  reconcile: z
    .union([z.literal(false), z.strictObject({ first: DURATION.optional(), max: DURATION.optional() })])
    .optional(),
  maxAttempts: z.number().int().min(1, 'must be a whole number of at least 1').optional(),
  remindBefore: z.union([z.literal(false), DURATION]).optional(),
});

/** The config's `recovery`, checked: the first problem names its field (`recovery.lease`). */
function checkRecovery(file: string, value: unknown): RecoveryConfig {
  const parsed = RECOVERY.safeParse(value);
  if (parsed.success) return parsed.data as RecoveryConfig;
  const issue = parsed.error.issues[0]!;
  const field = ['recovery', ...issue.path.map(String)].join('.');
  const message =
    issue.code === 'unrecognized_keys'
      ? `has no setting ${issue.keys.map((k) => `"${k}"`).join(', ')} (lease, sweepInterval, reconcile, maxAttempts)`
      : issue.code === 'invalid_union' && issue.path[0] === 'reconcile'
        ? 'must be false or { first, max } durations'
        : issue.message;
  throw new ConfigurationError(`--config ${file}: "${field}" ${message}`);
}

/**
 * What a `countersign serve --config FILE` module exports: its default export, or named exports.
 *
 * @example
 * // countersign.config.js
 * import { payInvoice } from './operations/pay-invoice.js';
 * export default {
 *   operations: [payInvoice],
 *   // store: new SqliteStore({ path: 'approvals.db' }),   // or --db/--store, not both
 *   authentication: {
 *     async setup(directory) {
 *       await directory.ensureTenant('acme', 'Acme Corp');
 *       await directory.addOperator({ tenant: 'acme', email: 'ada@acme.example',
 *         password: process.env.ADA_PASSWORD, roles: ['approver'] });
 *     },
 *   },
 * };
 */
export interface ServeConfig {
  /** The operations this server proposes, approves and executes. */
  readonly operations: readonly AnyOperation[];
  /** Task-specific read tools (`defineReadTool`), exposed over MCP (`--mcp`) beside the proposal tools. */
  readonly readTools?: readonly AnyReadTool[];
  /**
   * The store. Without it, `--db FILE` / `--store LOCATION` names it (default SQLite
   * `./countersign.db`); giving both is refused, since neither would be obviously the one served.
   */
  readonly store?: Store;
  readonly authentication?: AuthenticationConfig;
  /** Session and body limits of the MCP endpoint (`--mcp`). */
  readonly mcp?: McpServeConfig;
  /** Proposal quotas per agent and per tenant (default on: see `DEFAULT_PROPOSAL_LIMITS`). */
  readonly limits?: ProposalLimitsOption;
  /** Signed webhooks and approval emails of lifecycle events (see `NotificationsConfig`). */
  readonly notifications?: NotificationsConfig;
  /** Connection, statement, request and shutdown deadlines (see {@link ServeTimeouts}). */
  readonly timeouts?: ServeTimeouts;
  /** Leases, the recovery sweep and automatic reconciliation (see {@link RecoveryConfig}). */
  readonly recovery?: RecoveryConfig;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** Loads and checks a config module (an ES module path, relative to the working directory). */
export async function loadServeConfig(file: string): Promise<ServeConfig> {
  let module: unknown;
  try {
    module = await import(pathToFileURL(resolve(file)).href);
  } catch (error) {
    throw new ConfigurationError(
      `--config ${file}: cannot load it (${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
  const exported = isRecord(module) && isRecord(module['default']) ? module['default'] : module;
  if (!isRecord(exported))
    throw new ConfigurationError(
      `--config ${file}: export { operations, readTools?, store?, authentication?, mcp?, limits?, notifications?, timeouts?, recovery? }`,
    );
  const operations = exported['operations'];
  if (!Array.isArray(operations) || operations.length === 0) {
    throw new ConfigurationError(
      `--config ${file}: "operations" must be a non-empty array of defineOperation(...) results`,
    );
  }
  for (const operation of operations) {
    if (
      !isRecord(operation) ||
      typeof operation['kind'] !== 'string' ||
      typeof operation['handback'] !== 'function'
    ) {
      throw new ConfigurationError(
        `--config ${file}: every entry of "operations" must come from defineOperation`,
      );
    }
  }
  const readTools = exported['readTools'];
  if (
    readTools !== undefined &&
    (!Array.isArray(readTools) ||
      !readTools.every(
        (t) => isRecord(t) && typeof t['name'] === 'string' && typeof t['read'] === 'function',
      ))
  ) {
    throw new ConfigurationError(
      `--config ${file}: "readTools" must be an array of defineReadTool(...) results`,
    );
  }
  const store = exported['store'];
  if (
    store !== undefined &&
    (!isRecord(store) || typeof store['transaction'] !== 'function' || typeof store['migrate'] !== 'function')
  ) {
    throw new ConfigurationError(`--config ${file}: "store" must implement the Store interface`);
  }
  const authentication = exported['authentication'];
  if (authentication !== undefined && !isRecord(authentication))
    throw new ConfigurationError(`--config ${file}: "authentication" must be an object`);
  const oidc = isRecord(authentication) ? authentication['oidc'] : undefined;
  if (oidc !== undefined) {
    if (!isRecord(oidc))
      throw new ConfigurationError(`--config ${file}: "authentication.oidc" must be an object`);
    checkOidcConfig(oidc as unknown as OidcConfig);
  }
  const mcp = exported['mcp'];
  if (mcp !== undefined) {
    if (!isRecord(mcp)) throw new ConfigurationError(`--config ${file}: "mcp" must be an object`);
    for (const key of Object.keys(mcp)) {
      const value = mcp[key];
      if (!(MCP_LIMITS as readonly string[]).includes(key))
        throw new ConfigurationError(`--config ${file}: "mcp.${key}" is not a known MCP limit`);
      if (!Number.isSafeInteger(value) || (value as number) < 1)
        throw new ConfigurationError(`--config ${file}: "mcp.${key}" must be a whole number above 0`);
    }
  }
  const timeouts = exported['timeouts'];
  if (timeouts !== undefined) {
    if (!isRecord(timeouts)) throw new ConfigurationError(`--config ${file}: "timeouts" must be an object`);
    for (const key of Object.keys(timeouts)) {
      if (!(TIMEOUTS as readonly string[]).includes(key))
        throw new ConfigurationError(
          `--config ${file}: "timeouts.${key}" is not a known timeout (${TIMEOUTS.join(', ')})`,
        );
      const value = timeouts[key];
      if (!Number.isSafeInteger(value) || (value as number) < 1)
        throw new ConfigurationError(
          `--config ${file}: "timeouts.${key}" must be a whole number of ms above 0`,
        );
    }
  }
  const limits = exported['limits'];
  if (limits !== undefined && limits !== false && !isRecord(limits))
    throw new ConfigurationError(`--config ${file}: "limits" must be false or an object`);
  const notifications = exported['notifications'];
  if (notifications !== undefined) {
    try {
      checkNotifications(notifications);
    } catch (error) {
      if (error instanceof ConfigurationError)
        throw new ConfigurationError(`--config ${file}: ${error.message}`, { cause: error });
      throw error;
    }
  }
  const recovery = exported['recovery'] === undefined ? undefined : checkRecovery(file, exported['recovery']);
  return {
    operations: operations as AnyOperation[],
    ...(recovery !== undefined ? { recovery } : {}),
    ...(readTools !== undefined ? { readTools: readTools as AnyReadTool[] } : {}),
    ...(notifications !== undefined ? { notifications: notifications as NotificationsConfig } : {}),
    ...(mcp !== undefined ? { mcp: mcp as McpServeConfig } : {}),
    ...(limits !== undefined ? { limits: limits as ProposalLimitsOption } : {}),
    ...(timeouts !== undefined ? { timeouts: timeouts as ServeTimeouts } : {}),
    ...(store !== undefined ? { store: store as unknown as Store } : {}),
    ...(authentication !== undefined ? { authentication: authentication as AuthenticationConfig } : {}),
  };
}
