import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigurationError } from '../canonical/errors.js';
import type { AnyOperation } from '../operation/define-operation.js';
import type { Store } from '../store/store.js';
import type { DirectoryOptions, PrincipalDirectory } from './directory/principal-directory.js';

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
  /** The URL operators reach the server at, when it is behind a proxy (approval links, Origin check, cookie security). */
  readonly publicUrl?: string;
  /** Roles that may decide (default `['approver', 'admin']`). */
  readonly approverRoles?: readonly string[];
  /**
   * Runs at every start, after the directory's tables exist: create your tenants, operators and
   * tokens here (idempotently: `ensureTenant`, `addOperator` answers `exists` for a known email).
   */
  readonly setup?: (directory: PrincipalDirectory) => Promise<void>;
}

/**
 * What a `countersign serve --config FILE` module exports: its default export, or named exports.
 *
 * @example
 * // countersign.config.js
 * import { payInvoice } from './operations/pay-invoice.js';
 * export default {
 *   operations: [payInvoice],
 *   // store: new SqliteStore({ path: 'approvals.db' }),   // default: --db FILE
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
  /** The store; defaults to SQLite at `--db FILE`. */
  readonly store?: Store;
  readonly authentication?: AuthenticationConfig;
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
    throw new ConfigurationError(`--config ${file}: export { operations, store?, authentication? }`);
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
  return {
    operations: operations as AnyOperation[],
    ...(store !== undefined ? { store: store as unknown as Store } : {}),
    ...(authentication !== undefined ? { authentication: authentication as AuthenticationConfig } : {}),
  };
}
