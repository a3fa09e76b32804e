import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppEnv } from './app-env.js';

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
}

/**
 * Serves an app with @hono/node-server and resolves once it listens.
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
  const server = await new Promise<Server>((resolve, reject) => {
    const created = serve({ fetch: app.fetch, port, hostname: host }, () =>
      resolve(created as Server),
    ) as Server;
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
