import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { parseJson } from '../../canonical/parse-json.js';
import type { Engine } from '../../engine/create-engine.js';
import { newId } from '../../engine/ids.js';
import type { Actor } from '../../operation/actor.js';
import type { AgentAuthenticator } from './agent-authenticator.js';
import { createMcpServer } from './create-mcp-server.js';

/** Options of {@link mcpHttpHandler}. */
export interface McpHttpOptions {
  /** Resolves the `Authorization: Bearer` token of every request to an agent principal. */
  readonly authenticate: AgentAuthenticator;
  /** The resource boundary of proposals made through MCP (default: none; see `McpSession.resource`). */
  readonly resource?: string;
  /** Open sessions at most (default 1 000); beyond it a new session is answered 503. */
  readonly maxSessions?: number;
  /** A session unused this long is closed (default 1 hour). */
  readonly idleMs?: number;
  /** Largest accepted request body in bytes (default 1 MiB). */
  readonly maxBodyBytes?: number;
  /** Defaults to the system clock. */
  readonly now?: () => number;
}

/** A streamable-HTTP MCP endpoint as one web-standard handler, plus what its host needs to stop it. */
export interface McpHttpHandler {
  handle(request: Request): Promise<Response>;
  /** How many sessions are open. */
  readonly sessions: number;
  /** Closes every session. */
  close(): Promise<void>;
}

interface OpenSession {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  readonly agent: Actor;
  lastSeen: number;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

const unauthenticated = (message: string) =>
  json(401, { reason: 'unauthenticated', message }, { 'www-authenticate': 'Bearer realm="countersign"' });
const rpcError = (status: number, message: string) =>
  json(status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });

async function readBody(
  request: Request,
  limit: number,
): Promise<{ kind: 'ok'; value: unknown } | { kind: 'error'; response: Response }> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > limit) return { kind: 'error', response: rpcError(413, 'request body too large') };
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > limit) return { kind: 'error', response: rpcError(413, 'request body too large') };
  try {
    return { kind: 'ok', value: parseJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) };
  } catch {
    return {
      kind: 'error',
      response: json(400, { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }),
    };
  }
}

/**
 * The MCP server over streamable HTTP, for `countersign serve --mcp` or any framework that speaks
 * web-standard `Request`/`Response`. Every request carries an agent's bearer token; a session is
 * opened by an `initialize` request and bound to that agent and its tenant (and to a fresh run id)
 * for its whole life. A request for a session with another agent's token is answered exactly like
 * an unknown session (404).
 *
 * @example
 * const mcp = mcpHttpHandler(engine, { authenticate: (token) => directory.authenticateBearer(token) });
 * app.all('/mcp', (c) => mcp.handle(c.req.raw));
 */
export function mcpHttpHandler(engine: Engine, options: McpHttpOptions): McpHttpHandler {
  const sessions = new Map<string, OpenSession>();
  const now = options.now ?? Date.now;
  const maxSessions = options.maxSessions ?? 1_000;
  const idleMs = options.idleMs ?? 3_600_000;
  const maxBody = options.maxBodyBytes ?? 1_048_576;

  const drop = async (id: string) => {
    const open = sessions.get(id);
    if (!open) return;
    sessions.delete(id);
    await open.server.close();
  };
  const sweepIdle = async () => {
    const cutoff = now() - idleMs;
    for (const [id, open] of sessions) if (open.lastSeen < cutoff) await drop(id);
  };

  async function handle(request: Request): Promise<Response> {
    const match = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/.exec(request.headers.get('authorization') ?? '');
    if (!match) return unauthenticated('send the agent token as Authorization: Bearer <token>');
    const actor = await options.authenticate(match[1]!);
    if (!actor) return unauthenticated('the bearer token is not valid');
    if (actor.kind !== 'agent')
      return json(403, { reason: 'forbidden', message: 'only an agent token opens an MCP session' });

    let parsedBody: unknown;
    if (request.method === 'POST') {
      const body = await readBody(request, maxBody);
      if (body.kind === 'error') return body.response;
      parsedBody = body.value;
    }
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const open = sessions.get(sessionId);
      if (!open || open.agent.id !== actor.id || open.agent.tenant !== actor.tenant)
        return rpcError(404, 'Session not found');
      open.lastSeen = now();
      return open.transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
    }
    if (request.method !== 'POST' || !isInitializeRequest(parsedBody)) {
      return rpcError(400, 'Bad Request: no session; send an initialize request first');
    }
    await sweepIdle();
    if (sessions.size >= maxSessions) return rpcError(503, 'too many open MCP sessions; try again later');
    const server = createMcpServer(engine, {
      tenant: actor.tenant,
      agent: actor.id,
      runId: newId('run'),
      ...(options.resource !== undefined ? { resource: options.resource } : {}),
    });
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, server, agent: actor, lastSeen: now() });
      },
      onsessionclosed: (id) => drop(id),
    });
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody });
  }

  return {
    handle,
    get sessions() {
      return sessions.size;
    },
    close: async () => {
      for (const id of [...sessions.keys()]) await drop(id);
    },
  };
}
