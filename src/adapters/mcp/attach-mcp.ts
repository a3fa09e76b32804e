import type { Engine } from '../../engine/create-engine.js';
import { type McpHttpHandler, type McpHttpOptions, mcpHttpHandler } from './mcp-http-handler.js';

/** The slice of a Hono app (or anything alike) that {@link attachMcp} uses. */
export interface RouteHost {
  all(path: string, handler: (c: { readonly req: { readonly raw: Request } }) => Promise<Response>): unknown;
}

/**
 * Mounts the streamable-HTTP MCP endpoint on an app at `path` (default `/mcp`) and returns the
 * handler, whose `close()` the host calls on shutdown.
 *
 * @example
 * const mcp = attachMcp(app, engine, { authenticate: (token) => directory.authenticateBearer(token) });
 * // on shutdown: await mcp.close();
 */
export function attachMcp(
  app: RouteHost,
  engine: Engine,
  options: McpHttpOptions & { readonly path?: string },
): McpHttpHandler {
  const handler = mcpHttpHandler(engine, options);
  app.all(options.path ?? '/mcp', (c) => handler.handle(c.req.raw));
  return handler;
}
