import { createLifecycleMetrics } from '../../../src/observability/index.js';
import { join } from 'node:path';
import { type DemoWorld, demoOperations, demoWorld } from '../../../src/demo/demo-world.js';
import { type AnyOperation, createEngine, type Engine, type Logger } from '../../../src/index.js';
import type { ProposalLimitsOption } from '../../../src/engine/index.js';
import {
  createCountersignApp,
  EventStreams,
  PrincipalDirectory,
  type OidcConfig,
  type RunningServer,
  startServer,
} from '../../../src/server/index.js';
import { SqliteStore } from '../../../src/store/sqlite/index.js';
import type { Store } from '../../../src/store/store.js';
import { ManualClock, tempDir } from '../../support/engine.js';
import { deliveryAdmin } from '../../../src/notify/deliveries.js';
import { notificationOutbox } from '../../../src/notify/outbox-writer.js';
import type { SlackApi } from '../../../src/notify/slack-api.js';
import { SlackOperators } from '../../../src/server/slack/slack-operators.js';
import type { SlackApprovals } from '../../../src/server/slack/slack-routes.js';
import { SlackRequestVerifier } from '../../../src/server/slack/slack-signature.js';

/**
 * scrypt's cost for the operators tests add: 2^10 instead of production's 2^15, so that a suite
 * hashing dozens of passwords takes milliseconds (test/server/password.test.ts holds the default).
 */
export const TEST_PASSWORD_COST = 2 ** 10;

/** The roles each test tenant has an operator for. */
export const ROLES = ['approver', 'viewer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** One tenant's secrets: an agent token, and per role an operator's email, password and API token. */
export interface TenantSecrets {
  readonly agentToken: string;
  readonly operators: Readonly<
    Record<Role, { readonly email: string; readonly password: string; readonly token: string }>
  >;
}

/** A real countersign server on 127.0.0.1 (port 0) over a real SQLite file (or a given store), with tenants acme and globex. */
export interface ServerHarness {
  readonly url: string;
  /** The app itself, for requests no socket would carry (a body whose Content-Length lies). */
  readonly app: { fetch(request: Request): Response | Promise<Response> };
  readonly engine: Engine;
  readonly world: DemoWorld;
  readonly clock: ManualClock;
  readonly store: Store;
  readonly directory: PrincipalDirectory;
  readonly tenants: Readonly<Record<'acme' | 'globex', TenantSecrets>>;
  readonly logs: { level: string; fields: object; message: string }[];
  close(): Promise<void>;
}

/** A logger that keeps lines in memory (tests must not write to the console). */
export function memoryLogger(lines: { level: string; fields: object; message: string }[]): Logger {
  return {
    info: (fields, message) => lines.push({ level: 'info', fields, message }),
    warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    error: (fields, message) => lines.push({ level: 'error', fields, message }),
  };
}

export async function serverHarness(
  options: {
    extraOperations?: AnyOperation[];
    publicUrl?: string;
    directory?: ConstructorParameters<typeof PrincipalDirectory>[1];
    /** Serve /metrics behind this token, fed by the engine's observer. */
    metricsToken?: string;
    /** The engine's proposal quotas (default: the engine's defaults). */
    limits?: ProposalLimitsOption;
    /** The store to serve from (closed with the server); default a new SQLite file. */
    store?: Store;
    /** Console single sign-on. */
    oidc?: OidcConfig;
    /** False turns password sign-in off. */
    passwordSignIn?: boolean;
    /** Writes webhook notifications to the outbox and serves the deliveries (nothing delivers them). */
    notifications?: boolean;
    /** The live event streams of `GET /api/v1/events` (default: the app's). */
    events?: EventStreams;
    /** The app's request deadline (default the app's 15 s). */
    requestDeadlineMs?: number;
    /** The engine's lease and the recovery sweep interval it tells refused callers. */
    recovery?: { readonly leaseMs?: number; readonly sweepIntervalMs?: number };
    /** Serves Slack approvals (interactions, user links) over a Web API that answers ok to everything. */
    slack?: boolean;
  } = {},
): Promise<ServerHarness> {
  const { dir, cleanup } = tempDir();
  const store = options.store ?? new SqliteStore({ path: join(dir, 'server.db') });
  const clock = new ManualClock();
  const world = demoWorld();
  const logs: ServerHarness['logs'] = [];
  const logger = memoryLogger(logs);
  const metrics = options.metricsToken ? createLifecycleMetrics() : undefined;
  const operations = [...demoOperations(world), ...(options.extraOperations ?? [])];
  const directory = new PrincipalDirectory(store, {
    clock,
    passwordCost: TEST_PASSWORD_COST,
    ...(options.directory ?? {}),
  });
  const engine = await createEngine({
    store,
    operations,
    approverDirectory: directory,
    ...(options.notifications
      ? { stepWriters: [notificationOutbox({ channels: ['webhook'], operations })] }
      : {}),
    clock,
    logger,
    ...(metrics ? { observers: [metrics.observer], onRateLimited: metrics.rateLimited } : {}),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
    ...options.recovery,
  });
  await directory.migrate();
  const tenants = {} as Record<'acme' | 'globex', TenantSecrets>;
  for (const tenant of ['acme', 'globex'] as const) {
    await directory.ensureTenant(tenant);
    const operators = {} as Record<Role, { email: string; password: string; token: string }>;
    for (const role of ROLES) {
      const email = `${role}@${tenant}.test`;
      const password = `pw-${role}-${tenant}-0123456789`;
      await directory.addOperator({ tenant, email, password, roles: [role] });
      operators[role] = { email, password, token: await directory.issueOperatorToken({ email }) };
    }
    tenants[tenant] = { agentToken: await directory.issueAgentToken({ tenant }), operators };
  }
  const events = options.events ?? new EventStreams();
  const slack = options.slack ? quietSlack(store, directory, clock) : undefined;
  const app = createCountersignApp({
    engine,
    directory,
    logger,
    clock,
    ...(options.publicUrl ? { publicUrl: options.publicUrl } : {}),
    ...(options.oidc ? { oidc: options.oidc } : {}),
    ...(options.passwordSignIn === false ? { passwordSignIn: false } : {}),
    ...(options.notifications ? { deliveries: deliveryAdmin(store) } : {}),
    events,
    ...(options.requestDeadlineMs === undefined ? {} : { requestDeadlineMs: options.requestDeadlineMs }),
    ...(slack ? { slack } : {}),
    ...(metrics && options.metricsToken
      ? { metrics: { registry: metrics.registry, token: options.metricsToken } }
      : {}),
  });
  const server: RunningServer = await startServer(app, {
    port: 0,
    host: '127.0.0.1',
    logger,
    onClose: () => engine.close(),
    onShutdown: () => events.close(),
  });
  return {
    url: server.url,
    app,
    engine,
    world,
    clock,
    store,
    directory,
    tenants,
    logs,
    close: async () => {
      await server.close();
      cleanup();
    },
  };
}

/** Slack approvals over a Web API that posts nothing and knows no Slack user's email. */
function quietSlack(store: Store, directory: PrincipalDirectory, clock: ManualClock): SlackApprovals {
  const api: SlackApi = {
    postMessage: async (m) => ({ kind: 'ok', value: { channel: m.channel, ts: '1.000001' } }),
    update: async () => ({ kind: 'ok', value: null }),
    postEphemeral: async () => ({ kind: 'ok', value: null }),
    userInfo: async () => ({ kind: 'ok', value: { verifiedEmail: null } }),
  };
  return {
    verifier: new SlackRequestVerifier('harness-signing-secret'),
    operators: new SlackOperators({ store, directory, api, clock }),
    api,
    cards: { refresh: async () => 'no_message' },
  };
}

/** A JSON request to the harness. */
export async function call(
  h: { url: string },
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !('content-type' in headers)) headers['content-type'] = 'application/json';
  const response = await fetch(`${h.url}${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body } : {}),
    redirect: 'manual',
  });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

/** Proposes through the API as a tenant's agent; returns the 201 body. */
export async function proposeViaApi(
  h: ServerHarness,
  tenant: 'acme' | 'globex',
  request: { operation: string; request: unknown; resource?: string; runId?: string; section?: string },
): Promise<Record<string, unknown> & { id: string; digest: string; short: string }> {
  const response = await call(h, 'POST', '/api/v1/proposals', {
    token: h.tenants[tenant].agentToken,
    body: { runId: 'run-test-1', ...request },
  });
  if (response.status !== 201)
    throw new Error(`propose failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as Record<string, unknown> & { id: string; digest: string; short: string };
}

let invoiceCounter = 0;

/** Adds a fresh open invoice to a tenant's books and returns its id (so every test pays its own). */
export function freshInvoice(world: DemoWorld, tenant: string, dueMinor = 24_049, currency = 'USD'): string {
  const id = `inv-t${++invoiceCounter}`;
  world.invoices.add({
    tenant,
    id,
    supplierName: 'Northwind Paper Co.',
    supplierAccount: 'acct-supplier-7',
    dueMinor,
    currency,
    status: 'open',
  });
  return id;
}
