import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { Logger } from '../engine/engine-context.js';
import type { AppEnv } from './app-env.js';
import { onClientError } from './client-error.js';

import { ListenError } from './listen-error.js';

export { ListenError };

/** A listening server. */
export interface RunningServer {
  /** `http://HOST:PORT`, with the port actually bound (useful with port 0). */
  readonly url: string;
  readonly port: number;
  /**
   * Graceful shutdown: stops accepting connections, lets in-flight requests finish (up to
   * `drainMs`), then runs `onClose` (close the engine and its store). Idempotent.
   */
  close(): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** Default 8787; 0 picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** How long in-flight requests may take to finish on shutdown before their sockets close (default 10 s). */
  readonly drainMs?: number;
  /** Runs after the last request finished: close the engine/store here. */
  readonly onClose?: () => Promise<void>;
  /** Runs as soon as close begins, before the drain: end long-lived responses (live event streams) here. */
  readonly onShutdown?: () => void;
  /** Where a request refused by Node's HTTP parser is logged (one warn line with its error code). */
  readonly logger?: Logger;
  /**
   * How long an idle keep-alive connection stays open for the client's next request (default
   * 65 s, Node's is 5 s). Longer than the idle timeout of common load balancers and clients (60 s
   * for AWS ALB, nginx's 60 s, Node's agent 5 s), so the client or proxy always closes an idle
   * connection first: a server closing it first races a request the client is sending on it, which
   * then fails with ECONNRESET.
   */
  readonly keepAliveTimeoutMs?: number;
  /**
   * How long a client has to send a request's headers before it is answered 408 and disconnected
   * (default 66 s: above the keep-alive timeout, as proxies' guidance asks, so a request that
   * starts at the end of a keep-alive period is not cut; a slow-loris connection trickling headers
   * is dropped then).
   */
  readonly headersTimeoutMs?: number;
  /**
   * How long a client has to send a whole request, body included (default 70 s, Node's is 5 min;
   * at least `headersTimeoutMs`). Responses are not limited: a live event stream stays open; the
   * app's own request deadline bounds how long an answer takes.
   */
  readonly requestTimeoutMs?: number;
}

/** Default of {@link StartServerOptions.keepAliveTimeoutMs}. */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;
/** Default of {@link StartServerOptions.headersTimeoutMs}. */
export const HEADERS_TIMEOUT_MS = 66_000;
/** Default of {@link StartServerOptions.requestTimeoutMs}. */
export const REQUEST_TIMEOUT_MS = 70_000;
// Node checks those two timeouts on this interval (its default 30 s would let a slow connection
// live up to 30 s past them); the check walks only the connections still sending a request.
const TIMEOUT_CHECK_MS = 1_000;

/**
 * Serves an app with @hono/node-server and resolves once it listens. A request Node's parser
 * refuses before the app sees it (headers over 16 KiB, a malformed request line or header, headers
 * or a request slower than the timeouts) is answered 431, 400 or 408 with the API's
 * `{ reason, message }` JSON and the connection closed (see {@link onClientError}).
 *
 * @example
 * const server = await startServer(app, { port: 0 });
 * console.log(`ready ${server.url}`);
 * process.once('SIGTERM', () => void server.close());
 */
export async function startServer(
  app: Hono<AppEnv>,
  options: StartServerOptions = {},
): Promise<RunningServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 8787;
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve(
      {
        fetch: app.fetch,
        port,
        hostname: host,
        // maxHeaderSize stays Node's 16 KiB: a larger header block is answered 431.
        serverOptions: {
          headersTimeout: options.headersTimeoutMs ?? Math.min(HEADERS_TIMEOUT_MS, requestTimeout),
          requestTimeout,
          connectionsCheckingInterval: TIMEOUT_CHECK_MS,
          keepAliveTimeout: options.keepAliveTimeoutMs ?? KEEP_ALIVE_TIMEOUT_MS,
        },
      },
      () => resolve(created as Server),
    ) as Server;
    // Requests Node refuses before the app sees them get the app's JSON refusal too.
    created.on('clientError', onClientError(options.logger));
    created.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.message;
      reject(new ListenError(`cannot listen on ${host}:${port}: ${why}`, { cause: error }));
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${shownHost}:${bound}`,
    port: bound,
    close: () => {
      closing ??= (async () => {
        const drained = new Promise<void>((resolve) => server.close(() => resolve()));
        options.onShutdown?.();
        // A keep-alive connection whose request just finished would otherwise hold the close
        // open until the client's own idle timeout.
        server.closeIdleConnections();
        const sweep = setInterval(() => server.closeIdleConnections(), 25);
        const timer = setTimeout(() => server.closeAllConnections(), options.drainMs ?? 10_000);
        await drained;
        clearInterval(sweep);
        clearTimeout(timer);
        await options.onClose?.();
      })();
      return closing;
    },
  };
}
