import { createHash, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import { ConfigurationError } from '../canonical/errors.js';
import { NONCE, secureHeaders } from 'hono/secure-headers';
import type { DeliveryAdmin } from '../notify/deliveries.js';
import type { Engine } from '../engine/create-engine.js';
import { type Clock, type Logger, silentLogger } from '../engine/engine-context.js';
import { apiRoutes } from './api/api-routes.js';
import type { EventStreams } from './api/event-streams.js';
import type { AppEnv } from './app-env.js';
import { authenticate, principalRecheck } from './auth/authenticate.js';
import { type OidcConfig, OidcRelyingParty } from './auth/oidc.js';
import { consoleRoutes } from './console/console-routes.js';
import { deliveryConsoleRoutes } from './console/delivery-console-routes.js';
import { operatorConsoleRoutes } from './console/operator-console-routes.js';
import { routingConsoleRoutes } from './console/routing-console-routes.js';
import { consoleSections } from './console/console-sections.js';
import { slackConsoleRoutes } from './console/slack-console-routes.js';
import { liveInboxAssets } from './console/live-inbox.js';
import type { PrincipalDirectory } from './directory/principal-directory.js';
import { errorHandler, notFoundHandler } from './handle-error.js';
import { HttpProblem } from '../http/http-problem.js';
import { probeReadiness, type ReadinessReport } from './readiness.js';
import { REQUEST_DEADLINE_MS, requestDeadline } from './request-deadline.js';
import { type SlackApprovals, slackInteractionRoutes, slackUserRoutes } from './slack/slack-routes.js';

/** What an MCP (or any other) extension is handed to mount its own routes. */
export interface AppExtensionContext {
  readonly engine: Engine;
  readonly directory: PrincipalDirectory;
  readonly logger: Logger;
}

/** Everything the countersign app is wired from. */
export interface CountersignAppOptions {
  readonly engine: Engine;
  /** The principal directory, in the same store as the engine. */
  readonly directory: PrincipalDirectory;
  /** A pino logger (or anything with info/warn/error). Defaults to silent. */
  readonly logger?: Logger;
  /**
   * The URL operators reach this server at, e.g. `https://approvals.example.com`, when it sits
   * behind a proxy: approval links, the Origin check and cookie security use it. Without it,
   * approval links name the address and port the server listens on (`http://127.0.0.1:8787`),
   * never the request's `Host` header; the Origin check and cookies use the request's own URL.
   */
  readonly publicUrl?: string;
  /** Defaults to the system clock. */
  readonly clock?: Clock;
  /** The absolute session lifetime in ms, for the cookie's Max-Age (default 12 hours). */
  readonly sessionAbsoluteMs?: number;
  /** Console single sign-on through an OpenID provider (checked here: https unless on loopback). */
  readonly oidc?: OidcConfig;
  /** Whether operators may sign in with a password (default true; false refuses POST /login). */
  readonly passwordSignIn?: boolean;
  /** Mounts extra routes (the MCP endpoint) on the app before the console. */
  readonly mcp?: (app: Hono<AppEnv>, ctx: AppExtensionContext) => void;
  /**
   * Serves Prometheus metrics at `/metrics` to scrapers that send `Authorization: Bearer <token>`.
   * The figures span every tenant, so they are behind their own token, never an operator's.
   */
  readonly metrics?: {
    readonly registry: { metrics(): Promise<string>; readonly contentType: string };
    readonly token: string;
  };
  /** Notification deliveries for admins (`deliveryAdmin(store)`): `/api/v1/deliveries`. */
  readonly deliveries?: DeliveryAdmin;
  /** The live event streams of `GET /api/v1/events` (`new EventStreams({ pollMs, heartbeatMs, maxPerPrincipal })`). */
  readonly events?: EventStreams;
  /**
   * What `GET /readyz` checks (`readiness({ store, workers })`). Default: one read through the
   * engine, so the store's reachability alone.
   */
  readonly readiness?: () => Promise<ReadinessReport>;
  /**
   * How long a request may take before it is answered `503 store_unavailable` (default 15 000 ms;
   * above the store's statement timeout). Live event streams and `/mcp` are not limited.
   */
  readonly requestDeadlineMs?: number;
  /**
   * Slack approvals: `POST /integrations/slack/interactions` (verified with Slack's request
   * signing, never a session or token) and the admins' Slack user links: `/api/v1/slack/users`
   * and the console's Slack page, which its navigation shows only then.
   */
  readonly slack?: SlackApprovals;
}

/**
 * The countersign HTTP app: API v1 under `/api/v1`, the operator console at `/`, `GET /healthz`
 * (the process is alive; never touches the store) and `GET /readyz` (store reachable, schema
 * current, background workers running: 200, else 503 with every check named).
 * Security headers on every response (CSP with a per-response nonce and no `unsafe-inline`,
 * `frame-ancestors 'none'`, `nosniff`, `no-referrer`); errors become responses in one place.
 *
 * @example
 * const app = createCountersignApp({ engine, directory, logger: pino() });
 * serve({ fetch: app.fetch, port: 8787 });
 */
export function createCountersignApp(options: CountersignAppOptions): Hono<AppEnv> {
  const logger = options.logger ?? silentLogger;
  const publicUrl = options.publicUrl ? new URL(options.publicUrl) : undefined;
  // Who may decide is the engine's setting alone (`approverRoles`); the console asks the engine.
  const oidc = options.oidc ? new OidcRelyingParty(options.oidc, options.engine.approverRoles) : undefined;
  if (options.passwordSignIn === false && !oidc)
    throw new ConfigurationError(
      'password sign-in is turned off: configure authentication.oidc, or nobody signs in',
    );
  const app = new Hono<AppEnv>();
  app.onError(errorHandler(logger));
  app.notFound(notFoundHandler);

  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    logger.info(
      {
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  });
  app.use(
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        scriptSrc: [NONCE],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
      xFrameOptions: 'DENY',
      referrerPolicy: 'no-referrer',
      crossOriginResourcePolicy: 'same-origin',
    }),
  );
  app.use(requestDeadline(options.requestDeadlineMs ?? REQUEST_DEADLINE_MS));
  app.use(consoleSections({ slack: options.slack !== undefined }));

  // Liveness: the process answers. It never touches the store, so an orchestrator does not
  // restart a healthy server while its database is down (that is what /readyz says).
  app.get('/healthz', (c) => {
    c.header('Cache-Control', 'no-store');
    return c.json({ status: 'ok' });
  });
  const ready =
    options.readiness ??
    probeReadiness(async () => {
      await options.engine.proposals.list('countersign-readyz', { limit: 1 });
      return 0;
    });
  // Readiness: take traffic only while the store answers and the background workers run.
  app.get('/readyz', async (c) => {
    const report = await ready();
    c.header('Cache-Control', 'no-store');
    if (report.status === 'ready') return c.json(report, 200);
    c.header('Retry-After', '5');
    return c.json(report, 503);
  });

  const metrics = options.metrics;
  if (metrics) {
    const expected = createHash('sha256').update(metrics.token).digest();
    app.get('/metrics', async (c) => {
      const given = createHash('sha256')
        .update(/^Bearer (.+)$/.exec(c.req.header('authorization') ?? '')?.[1] ?? '')
        .digest();
      if (!timingSafeEqual(given, expected)) {
        throw new HttpProblem(401, 'unauthenticated', 'the metrics token is required', {
          headers: { 'WWW-Authenticate': 'Bearer realm="metrics"' },
        });
      }
      c.header('Cache-Control', 'no-store');
      c.header('Content-Type', metrics.registry.contentType);
      return c.body(await metrics.registry.metrics());
    });
  }

  // Before authentication: Slack proves itself by signing the request, not with a session or token.
  if (options.slack)
    app.route('/', slackInteractionRoutes({ engine: options.engine, slack: options.slack, logger }));
  const auth = authenticate(options.directory, publicUrl);
  app.use('*', (c, next) => (c.req.path.startsWith('/assets/') ? next() : auth(c, next)));
  if (options.slack)
    app.route('/api/v1/slack/users', slackUserRoutes({ operators: options.slack.operators, publicUrl }));
  app.route(
    '/api/v1',
    apiRoutes({
      engine: options.engine,
      directory: options.directory,
      publicUrl,
      deliveries: options.deliveries,
      events: options.events,
      logger,
      recheck: principalRecheck(options.directory),
    }),
  );
  options.mcp?.(app, { engine: options.engine, directory: options.directory, logger });
  app.route('/', liveInboxAssets());
  app.route('/', deliveryConsoleRoutes({ deliveries: options.deliveries, publicUrl }));
  app.route(
    '/',
    operatorConsoleRoutes({
      directory: options.directory,
      publicUrl,
      roles: [...new Set(['admin', ...options.engine.approverRoles, 'viewer'])],
      sso: oidc !== undefined,
      engine: options.engine,
    }),
  );
  app.route('/', routingConsoleRoutes({ engine: options.engine, publicUrl, sso: oidc !== undefined }));
  if (options.slack)
    app.route(
      '/',
      slackConsoleRoutes({ operators: options.slack.operators, publicUrl, sso: oidc !== undefined }),
    );
  app.route(
    '/',
    consoleRoutes({
      engine: options.engine,
      directory: options.directory,
      publicUrl,
      clock: options.clock ?? { now: () => Date.now() },
      sessionMaxAgeSeconds: Math.floor((options.sessionAbsoluteMs ?? 12 * 3_600_000) / 1000),
      oidc,
      passwordSignIn: options.passwordSignIn,
      logger,
    }),
  );
  return app;
}
