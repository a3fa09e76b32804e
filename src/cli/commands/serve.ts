import type { attachMcp, McpHttpHandler } from '../../adapters/mcp/index.js';
import { join, resolve } from 'node:path';
import { demoOperations, demoReadTools, demoWorld } from '../../demo/demo-world.js';
import { runDemoAgent } from '../../demo/demo-agent.js';
import { DEMO_TENANTS, seedDemo } from '../../demo/seed-demo.js';
import { seedDemoRouting } from '../../demo/demo-routing.js';
import { createEngine, type Engine } from '../../engine/create-engine.js';
import { deliveryAdmin } from '../../notify/deliveries.js';
import { createNotifications, type Notifications, tenantApprovers } from '../../notify/notifications.js';
import { resolveNotifications } from '../../notify/notify-config.js';
import type { AnyOperation } from '../../operation/define-operation.js';
import { oidcFromEnvironment } from '../../server/auth/oidc.js';
import { createCountersignApp } from '../../server/create-app.js';
import { PrincipalDirectory } from '../../server/directory/principal-directory.js';
import { type AuthenticationConfig, loadServeConfig } from '../../server/serve-config.js';
import { readiness } from '../../server/readiness.js';
import { approvalLink } from '../../server/server-origin.js';
import { startServer } from '../../server/start-server.js';
import { SlackOperators } from '../../server/slack/slack-operators.js';
import { SlackRequestVerifier } from '../../server/slack/slack-signature.js';
import { EventStreams } from '../../server/api/event-streams.js';
import { describeStoreTarget, openStore } from '../../store/open-store.js';
import { storeFaultFields } from '../../store/store-fault.js';
import type { Store } from '../../store/store.js';
import { type Command, stringOption, UsageProblem } from '../command.js';
import { loadOptional } from '../load-optional.js';
import { waitForStore } from '../wait-for-store.js';
import { recoverySettings, remindBeforeMs } from '../recovery-settings.js';
import {
  cliStoreLocation,
  demoFilesDir,
  refuseTwoStores,
  STORE_OPTIONS,
  sealKeyFromEnv,
  storeOptionsHelp,
} from '../store-option.js';

function portOf(value: string | undefined): number {
  if (value === undefined) return 8787;
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value) || port > 65_535)
    throw new UsageProblem(`--port ${value}: expected a port number from 0 to 65535`);
  return port;
}

/** What `countersign serve` logs at start when COUNTERSIGN_SEAL_KEY is not set: the risk, then how to set it. */
export const NO_SEAL_KEY_WARNING =
  'COUNTERSIGN_SEAL_KEY is not set: records are hash-chained but not sealed, so a database writer could forge an approval, a grant, a notification or a re-hashed audit chain. ' +
  'To seal them, start with COUNTERSIGN_SEAL_KEY set to 32 or more random bytes (e.g. COUNTERSIGN_SEAL_KEY=$(openssl rand -hex 32)) and keep that key for the database from its first start.';

/** `countersign serve`: the operator console and HTTP API on one port. */
export const serveCommand: Command = {
  path: ['serve'],
  summary: 'serve the operator console and the HTTP API (SQLite by default; --demo for a ready-made desk)',
  help: `Usage: countersign serve [--db FILE | --store LOCATION] [--config FILE] [--port N] [--host H]
                         [--demo] [--demo-credentials FILE] [--mcp]
                         [--webhook URL --webhook-secret whsec_…] [--smtp URL --mail-from ADDRESS]
                         [--lease DURATION] [--sweep-interval DURATION]

Serves the operator console at / and the HTTP API at /api/v1 (OpenAPI at /api/v1/openapi.json),
and prints "ready http://HOST:PORT" once listening. SIGTERM or SIGINT stops accepting
connections, lets in-flight requests finish, and closes the database cleanly.

${storeOptionsHelp(27, 'the SQLite file (default ./countersign.db, created if missing)')}
  --config FILE            an ES module exporting { operations, readTools?, store?,
                           authentication?, mcp?, limits?, notifications? } (readTools:
                           defineReadTool results, listed over --mcp) (limits: proposal quotas
                           per agent and tenant, or false; notifications: { webhook, email, slack, retry })
                           (mcp: { maxSessions, maxSessionsPerTenant, maxSessionsPerAgent,
                           idleMs, maxBodyBytes } limits the --mcp endpoint)
                           (timeouts: { connectMs, statementMs, requestMs, drainMs }; defaults
                           5 000, 10 000, 15 000 and 10 000 ms)
  --port N                 default 8787 (0 picks a free port)
  --host H                 default 127.0.0.1
  --demo                   the example operations (invoice payments, refunds, email drafts) and
                           the read tool list_open_invoices,
                           tenants acme and globex with approver, viewer and admin operators,
                           one agent each, and a scripted agent proposing a realistic mix
  --demo-credentials FILE  where --demo writes the logins and tokens the first time
                           (default: countersign-demo-credentials.json beside the SQLite file
                           or the pglite: directory, else in the working directory)
  --mcp                    also serve MCP over streamable HTTP at /mcp (agent bearer tokens)
  --webhook URL            POST each lifecycle event (proposal.created, .approval_given,
                           .decided, .outcome) to URL, signed per Standard Webhooks,
                           retried for 24 h
  --webhook-secret SECRET  the signing secret, whsec_ and base64 of 24 to 64 random bytes
  --smtp URL               email the approvers who may decide each new proposal and each
                           approval toward a quorum, and the outcome to those who approved
                           (smtp://HOST:PORT)
  --mail-from ADDRESS      the From address of those emails
  --lease DURATION         how long an approved attempt may run before another server may take
                           it over (default 1m, at least 1s): shorter takes a crashed worker's
                           work over sooner, but a provider call must finish within it
  --sweep-interval DURATION
                           how often expiry, recovery and automatic reconciliation run
                           (default 15s, at most the lease); config file: recovery, where
                           reconcile: { first: '10s', max: '10m' } sets when a proposal left
                           needs_reconciliation is looked up (10s after, doubling up to 10m
                           between tries; false: operators reconcile by hand only)

Environment: COUNTERSIGN_SEAL_KEY (at least 32 bytes, e.g. openssl rand -hex 32; keep it out of
the database's reach) seals every proposal, approval, grant and audit event with an HMAC, so a
database writer cannot forge or widen one without it; without it records are hash-chained only
and the server says so after its start-up lines. The same key goes to countersign audit verify.
COUNTERSIGN_METRICS_TOKEN=… serves Prometheus metrics at /metrics to scrapers
sending it as a bearer token (the figures span every tenant).
COUNTERSIGN_WEBHOOK_URL, COUNTERSIGN_WEBHOOK_SECRET, COUNTERSIGN_SMTP_URL and COUNTERSIGN_MAIL_FROM
stand for the notification flags (a flag wins); a config file uses notifications.
COUNTERSIGN_SLACK_BOT_TOKEN, COUNTERSIGN_SLACK_SIGNING_SECRET and COUNTERSIGN_SLACK_CHANNEL post
each new proposal to Slack with Approve and Decline (interactivity URL
/integrations/slack/interactions; COUNTERSIGN_SLACK_API_URL overrides https://slack.com/api/);
a config file uses notifications.slack.
With --demo, COUNTERSIGN_OIDC_ISSUER, COUNTERSIGN_OIDC_CLIENT_ID, COUNTERSIGN_OIDC_CLIENT_SECRET,
COUNTERSIGN_OIDC_TENANT_CLAIM (default tenant) and COUNTERSIGN_OIDC_ROLES_CLAIM (default roles)
offer "Sign in with SSO" (callback /login/oidc/callback); a config file uses authentication.oidc.`,
  options: {
    ...STORE_OPTIONS,
    config: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    demo: { type: 'boolean' },
    'demo-credentials': { type: 'string' },
    mcp: { type: 'boolean' },
    webhook: { type: 'string' },
    'webhook-secret': { type: 'string' },
    smtp: { type: 'string' },
    'mail-from': { type: 'string' },
    lease: { type: 'string' },
    'sweep-interval': { type: 'string' },
  },
  async run(args, io) {
    const demo = args.values['demo'] === true;
    const location = cliStoreLocation(args);
    const configFile = stringOption(args, 'config');
    const port = portOf(stringOption(args, 'port'));
    const host = stringOption(args, 'host') ?? '127.0.0.1';
    const sealKey = sealKeyFromEnv();
    if (demo && configFile)
      throw new UsageProblem('--demo serves the example operations; it cannot be combined with --config');
    if (args.values['demo-credentials'] !== undefined && !demo)
      throw new UsageProblem('--demo-credentials needs --demo');

    // Optional peer dependencies, loaded only by the command that uses them.
    const { pino } = await loadOptional('pino', 'countersign serve', () => import('pino'));
    const logger = pino(
      { level: 'info', base: { service: 'countersign' } },
      { write: (line: string) => io.stderr(line) },
    );
    const config = configFile ? await loadServeConfig(configFile) : undefined;
    const recovery = recoverySettings(
      { lease: stringOption(args, 'lease'), sweepInterval: stringOption(args, 'sweep-interval') },
      config?.recovery,
    );
    const remindBefore = remindBeforeMs(config?.recovery);
    await refuseTwoStores(location, config?.store);
    // Checked before any store is opened: a malformed secret stops the start, naming its flag.
    const notifying = resolveNotifications({
      config: config?.notifications,
      flags: {
        webhook: stringOption(args, 'webhook'),
        webhookSecret: stringOption(args, 'webhook-secret'),
        smtp: stringOption(args, 'smtp'),
        mailFrom: stringOption(args, 'mail-from'),
      },
      env: process.env,
    });
    // The config file's authentication.oidc, or for --demo the COUNTERSIGN_OIDC_* variables
    // (checked here, before any store is opened: an http:// issuer off loopback stops the start).
    const oidc = config?.authentication?.oidc ?? (demo ? oidcFromEnvironment(process.env) : undefined);
    // The SQLite file: --db FILE, --store FILE, or ./countersign.db.
    const db = resolve(location?.kind === 'sqlite' ? location.target : 'countersign.db');
    const target = location
      ? location.kind === 'sqlite'
        ? db
        : location.target
      : config?.store
        ? undefined
        : db;
    const timeouts = config?.timeouts ?? {};
    const store: Store =
      config?.store ??
      (await openStore(target ?? db, {
        timeouts: {
          ...(timeouts.connectMs !== undefined ? { connectMs: timeouts.connectMs } : {}),
          ...(timeouts.statementMs !== undefined ? { statementMs: timeouts.statementMs } : {}),
        },
      }));
    // PostgreSQL may still be starting (or restarting): wait for it instead of exiting.
    const waited = await waitForStore(store, {
      name: describeStoreTarget(target ?? 'config store'),
      stderr: io.stderr,
      signal: io.signal,
    });
    if (waited.kind === 'stopped') {
      await store.close();
      io.stdout('stopped\n');
      return 0;
    }
    // The demo's credentials and provider journal: beside the SQLite file or the pglite: directory,
    // else in the working directory (said at the start).
    const demoFiles = demoFilesDir(location);
    const journal = join(demoFiles.dir, 'countersign-demo-provider.jsonl');
    const world = demo ? demoWorld({ journal }) : undefined;
    const operations: readonly AnyOperation[] = world ? demoOperations(world) : (config?.operations ?? []);
    if (operations.length === 0) {
      await store.close();
      throw new UsageProblem('nothing to serve: pass --config FILE with your operations, or --demo');
    }
    const auth: AuthenticationConfig = config?.authentication ?? {};
    let listening: string | undefined;
    let directoryRef: PrincipalDirectory | undefined;
    let engineRef: Engine | undefined;
    const approverRoles = auth.approverRoles ?? ['approver', 'admin'];
    const notifications: Notifications | undefined = notifying
      ? createNotifications(notifying, {
          store,
          operations,
          logger,
          ...(sealKey ? { sealKey } : {}),
          publicUrl: () => auth.publicUrl ?? listening ?? `http://${host}:${port}`,
          approvers: (tenant) =>
            directoryRef ? tenantApprovers(directoryRef, approverRoles)(tenant) : Promise.resolve([]),
          // The engine is made after its step writers: asked at delivery, when it exists.
          proposal: async (tenant, id) => engineRef?.proposals.get(tenant, id),
          mayApprove: async (actor, proposalId) => {
            const proposal = await engineRef?.proposals.get(actor.tenant, proposalId);
            return (
              proposal !== undefined && engineRef?.proposals.mayDecide(actor, proposal).kind === 'allowed'
            );
          },
        })
      : undefined;
    // Prometheus metrics at /metrics when COUNTERSIGN_METRICS_TOKEN is set (scrapers send it as a bearer token).
    const metricsToken = process.env['COUNTERSIGN_METRICS_TOKEN'];
    const metrics = metricsToken
      ? (
          await loadOptional(
            'prom-client',
            'COUNTERSIGN_METRICS_TOKEN (Prometheus metrics)',
            () => import('../../observability/prometheus-metrics.js'),
          )
        ).createLifecycleMetrics()
      : undefined;
    const mcpModule =
      args.values['mcp'] === true
        ? await loadOptional(
            '@modelcontextprotocol/sdk',
            'countersign serve --mcp',
            () => import('../../adapters/mcp/index.js'),
          )
        : undefined;
    const directory = new PrincipalDirectory(store, {
      ...(auth.sessionIdleMs !== undefined ? { sessionIdleMs: auth.sessionIdleMs } : {}),
      ...(auth.sessionAbsoluteMs !== undefined ? { sessionAbsoluteMs: auth.sessionAbsoluteMs } : {}),
      ...(auth.loginLimit !== undefined ? { loginLimit: auth.loginLimit } : {}),
      ...(auth.trustedDeviceMs !== undefined ? { trustedDeviceMs: auth.trustedDeviceMs } : {}),
      ...(auth.providerSessionMaxMs !== undefined ? { providerSessionMaxMs: auth.providerSessionMaxMs } : {}),
      ...(sealKey ? { sealKey } : {}),
    });
    // createEngine migrates the store first, in one transaction that logs nothing until it ends.
    const pendingMigrations = (await store.health?.())?.pendingMigrations ?? 0;
    if (pendingMigrations > 0)
      logger.info({ pendingMigrations }, 'applying schema migrations (a large store may take a while)');
    const engine = await createEngine({
      store,
      operations,
      // An approval completing a quorum re-checks earlier approvers against the directory.
      approverDirectory: directory,
      readTools: world ? demoReadTools(world) : (config?.readTools ?? []),
      logger,
      leaseMs: recovery.leaseMs,
      sweepIntervalMs: recovery.sweepMs,
      ...(recovery.reconcile ? { reconcileBackoff: recovery.reconcile } : {}),
      ...(metrics ? { observers: [metrics.observer], onRateLimited: metrics.rateLimited } : {}),
      ...(notifications ? { stepWriters: [notifications.writer] } : {}),
      ...(auth.approverRoles ? { approverRoles: auth.approverRoles } : {}),
      ...(auth.allowEditorApproval === true ? { allowEditorApproval: true } : {}),
      ...(config?.limits !== undefined ? { limits: config.limits } : {}),
      ...(sealKey ? { sealKey } : {}),
    });
    engineRef = engine;
    await directory.migrate();
    directoryRef = directory;
    await auth.setup?.(directory);
    const credentialsOption = stringOption(args, 'demo-credentials');
    const credentialsFile = resolve(
      credentialsOption ?? join(demoFiles.dir, 'countersign-demo-credentials.json'),
    );
    const seeded = demo ? await seedDemo(directory, credentialsFile) : undefined;
    // Payments over 1,000.00 to the finance group (src/demo/demo-routing.ts).
    if (seeded?.kind === 'seeded')
      await seedDemoRouting(
        engine,
        Object.keys(DEMO_TENANTS),
        notifying?.slack ? { channel: notifying.slack.channel } : {},
      );
    let mcp: McpHttpHandler | undefined;
    const events = new EventStreams();
    let sweepsRunning = false;
    const app = createCountersignApp({
      engine,
      directory,
      logger,
      events,
      ...(timeouts.requestMs !== undefined ? { requestDeadlineMs: timeouts.requestMs } : {}),
      readiness: readiness({
        store,
        workers: {
          sweeps: () => sweepsRunning,
          ...(notifications ? { notifications: () => notifications.dispatcher.running } : {}),
        },
      }),
      ...(metrics && metricsToken ? { metrics: { registry: metrics.registry, token: metricsToken } } : {}),
      ...(mcpModule
        ? {
            mcp: (
              host: Parameters<typeof attachMcp>[0],
              ctx: { engine: typeof engine; directory: typeof directory },
            ) => {
              mcp = mcpModule.attachMcp(host, ctx.engine, {
                ...config?.mcp,
                authenticate: (token) => ctx.directory.authenticateBearer(token),
                logger,
                // The same page the API's approvalUrl names: the public URL, else where this server listens.
                approvalUrl: (p) =>
                  approvalLink(new URL(auth.publicUrl ?? listening ?? `http://${host}:${port}`).origin, p),
              });
            },
          }
        : {}),
      ...(auth.publicUrl ? { publicUrl: auth.publicUrl } : {}),
      ...(auth.sessionAbsoluteMs !== undefined ? { sessionAbsoluteMs: auth.sessionAbsoluteMs } : {}),
      ...(oidc ? { oidc } : {}),
      ...(auth.password === false ? { passwordSignIn: false } : {}),
      ...(notifications ? { deliveries: deliveryAdmin(store) } : {}),
      ...(notifications?.slack && notifying?.slack
        ? {
            slack: {
              verifier: new SlackRequestVerifier(notifying.slack.signingSecret),
              operators: new SlackOperators({
                store,
                directory,
                api: notifications.slack.api,
                ...(sealKey ? { sealKey } : {}),
              }),
              api: notifications.slack.api,
              cards: notifications.slack.cards,
            },
          }
        : {}),
    });
    let server: Awaited<ReturnType<typeof startServer>>;
    try {
      server = await startServer(app, {
        port,
        host,
        logger,
        // After the drain: attempts still short of their provider go to another server at once.
        onClose: async () => {
          await engine.sweeps.releaseLeases();
          await engine.close();
        },
        onShutdown: () => events.close(),
        ...(timeouts.drainMs !== undefined ? { drainMs: timeouts.drainMs } : {}),
      });
    } catch (error) {
      await engine.close();
      throw error;
    }
    listening = server.url;
    notifications?.dispatcher.start();
    // Expiry and recovery sweeps are safe to run in every instance at once (compare-and-set). One
    // sweep at a time in this process: a slow one is not joined by the next.
    let sweeping: Promise<unknown> | undefined;
    // A store outage is one warn line per sweep; anything else is a bug, with its stack.
    const sweepFailed = (what: string) => (error: unknown) => {
      const fault = storeFaultFields(error);
      if (fault) logger.warn(fault, `${what} waits for the store`);
      else logger.error({ err: error }, `${what} failed`);
    };
    const sweep = setInterval(() => {
      if (sweeping) return;
      sweeping = Promise.all([
        engine.sweeps.expireDue().catch(sweepFailed('expiry sweep')),
        // Escalation, then the one reminder per proposal (only where notifications can carry it).
        engine.sweeps
          .escalateDue()
          .then(() =>
            notifications && remindBefore !== false
              ? engine.sweeps.remindDue({ beforeExpiryMs: remindBefore })
              : undefined,
          )
          .catch(sweepFailed('escalation sweep')),
        // Recovery first: an attempt it sends to reconciliation is asked about on the backoff's schedule.
        engine.sweeps
          .recover({ maxAttempts: recovery.maxAttempts })
          .then(() => (recovery.reconcile ? engine.sweeps.reconcileDue() : undefined))
          .catch(sweepFailed('recovery sweep')),
      ]).finally(() => {
        sweeping = undefined;
      });
    }, recovery.sweepMs);
    sweep.unref();
    sweepsRunning = true;
    if (world) await runDemoAgent({ engine, world, tenants: Object.keys(DEMO_TENANTS), logger });

    logger.info({ url: server.url, store: describeStoreTarget(target ?? 'config store') }, 'listening');
    io.stdout(`ready ${server.url}\n`);
    if (mcp) io.stdout(`mcp ${server.url}/mcp (agent bearer tokens)\n`);
    if (notifications) io.stdout(`notifications: ${notifications.channels.join(', ')}\n`);
    if (demo && demoFiles.kind === 'working_directory')
      io.stdout(
        `demo: ${demoFiles.store} has no directory of its own: the demo's ${
          credentialsOption === undefined ? 'credentials and provider journal are' : 'provider journal is'
        } in the working directory ${demoFiles.dir}\n`,
      );
    if (seeded?.kind === 'seeded') {
      const login = seeded.credentials.tenants['acme']?.operators.find((o) => o.role === 'approver');
      if (login)
        io.stdout(`demo: sign in at ${server.url}/login as ${login.email} with password ${login.password}\n`);
      const adminToken = seeded.credentials.tenants['acme']?.adminToken;
      if (adminToken)
        io.stdout(
          `demo: acme admin API token (grants over the API, Authorization: Bearer …): ${adminToken}\n`,
        );
      io.stdout(`demo: every demo login and token is in ${seeded.file}\n`);
    } else if (seeded) {
      io.stdout(
        `demo: the store was already seeded; its logins are in ${credentialsFile} (written at the first start)\n`,
      );
    }

    // After the ready and sign-in lines, so it is not the first thing a newcomer running the demo
    // reads, yet never missed: a server without a key still says so at every start.
    if (!sealKey) logger.warn({ sealed: false }, NO_SEAL_KEY_WARNING);

    await new Promise<void>((done) => {
      if (!io.signal) return;
      if (io.signal.aborted) done();
      else io.signal.addEventListener('abort', () => done(), { once: true });
    });
    clearInterval(sweep);
    sweepsRunning = false;
    await sweeping;
    logger.info({}, 'shutting down');
    await notifications?.dispatcher.stop();
    await mcp?.close();
    await server.close();
    io.stdout('stopped\n');
    return 0;
  },
};
