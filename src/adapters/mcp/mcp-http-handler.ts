import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { parseJson } from '../../canonical/parse-json.js';
import type { Engine } from '../../engine/create-engine.js';
import type { Logger } from '../../engine/engine-context.js';
import { newId } from '../../engine/ids.js';
import type { Actor } from '../../operation/actor.js';
import {
  bodyTooLarge,
  HttpProblem,
  type ProblemReason,
  type ProblemStatus,
} from '../../http/http-problem.js';
import { BindingError, type BindingErrorHook } from '../shared/agent-binding.js';
import type { AgentAuthenticator } from './agent-authenticator.js';
import { createMcpServer, type McpServerOptions } from './create-mcp-server.js';
import { McpSessionLedger, type McpSessionScope } from './mcp-session-ledger.js';
import { readBoundedBody } from '../../http/read-bounded-body.js';

/** Options of {@link mcpHttpHandler}. */
export interface McpHttpOptions {
  /** Resolves the `Authorization: Bearer` token of every request to an agent principal. */
  readonly authenticate: AgentAuthenticator;
  /** The resource boundary of proposals made through MCP (default: none; see `McpSession.resource`). */
  readonly resource?: string;
  /**
   * Open sessions of the whole server at most (default 1 000), the backstop behind the per-tenant
   * and per-agent caps; beyond it a new session is answered 503 `rate_limited` with `Retry-After`.
   */
  readonly maxSessions?: number;
  /**
   * Open sessions of one tenant's agents at most (default 100); beyond it that tenant's next
   * session is answered 429 `rate_limited` with `Retry-After`, and other tenants are unaffected.
   */
  readonly maxSessionsPerTenant?: number;
  /** Open sessions of one agent at most (default 20); beyond it 429 `rate_limited` with `Retry-After`. */
  readonly maxSessionsPerAgent?: number;
  /** A session unused this long is closed (default 1 hour). */
  readonly idleMs?: number;
  /**
   * Largest accepted request body in bytes (default 1 MiB), counted as it streams in whatever
   * `Content-Length` says; a larger body is answered 413 `body_too_large` and not read further.
   */
  readonly maxBodyBytes?: number;
  /** Defaults to the system clock. */
  readonly now?: () => number;
  /**
   * Called when the authenticated agent cannot be a session's binding (an authenticator that
   * returned a principal without a tenant or id, or with the text "undefined"). `handle` then
   * rejects with that `BindingError` (the host answers 500): it is the application's mistake, and
   * the MCP client is never asked to fix it.
   */
  readonly onBindingError?: BindingErrorHook;
  /** Where a tool call that fails inside the server is logged (default: silent). */
  readonly logger?: Logger;
  /** The console page of a proposal, handed to the agent and its client (see `McpServerOptions.approvalUrl`). */
  readonly approvalUrl?: McpServerOptions['approvalUrl'];
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
  /** Gives the session's slot in the ledger back. */
  readonly release: () => void;
  /** Whether the token that opened the session still authenticates its agent. */
  readonly stillValid: () => Promise<boolean>;
  lastSeen: number;
}

/** Default caps of open sessions: per agent, per tenant, and for the whole server. */
const DEFAULT_LIMITS = Object.freeze({ perAgent: 20, perTenant: 100, total: 1_000 });

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

// A refusal before the JSON-RPC layer, as the server's problem details (application/problem+json).
const problem = (
  status: ProblemStatus,
  reason: ProblemReason,
  message: string,
  extra: { readonly body?: Record<string, unknown>; readonly headers?: Record<string, string> } = {},
) =>
  new HttpProblem(status, reason, message, {
    ...(extra.body ? { extra: extra.body } : {}),
    ...(extra.headers ? { headers: extra.headers } : {}),
  }).toResponse();
const unauthenticated = (message: string) =>
  problem(401, 'unauthenticated', message, { headers: { 'www-authenticate': 'Bearer realm="countersign"' } });
const rpcError = (status: number, message: string) =>
  json(status, { jsonrpc: '2.0', error: { code: -32000, message }, id: null });

async function readBody(
  request: Request,
  limit: number,
): Promise<{ kind: 'ok'; value: unknown } | { kind: 'error'; response: Response }> {
  const body = await readBoundedBody(request, limit);
  if (body.kind === 'too_large') {
    return { kind: 'error', response: bodyTooLarge(limit).toResponse() };
  }
  if (body.kind === 'broken')
    return { kind: 'error', response: rpcError(400, 'the request body was cut off') };
  try {
    return { kind: 'ok', value: parseJson(new TextDecoder('utf-8', { fatal: true }).decode(body.bytes)) };
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
 * an unknown session (404). Open sessions are capped per agent, per tenant and in total, so one
 * tenant's agent cannot use up the sessions of the others; request bodies are capped as they stream.
 *
 * @example
 * const mcp = mcpHttpHandler(engine, { authenticate: (token) => directory.authenticateBearer(token) });
 * app.all('/mcp', (c) => mcp.handle(c.req.raw));
 */
export function mcpHttpHandler(engine: Engine, options: McpHttpOptions): McpHttpHandler {
  const sessions = new Map<string, OpenSession>();
  const now = options.now ?? Date.now;
  const ledger = new McpSessionLedger({
    perAgent: options.maxSessionsPerAgent ?? DEFAULT_LIMITS.perAgent,
    perTenant: options.maxSessionsPerTenant ?? DEFAULT_LIMITS.perTenant,
    total: options.maxSessions ?? DEFAULT_LIMITS.total,
  });
  const idleMs = options.idleMs ?? 3_600_000;
  const maxBody = options.maxBodyBytes ?? 1_048_576;

  const drop = async (id: string) => {
    const open = sessions.get(id);
    if (!open) return;
    sessions.delete(id);
    open.release();
    await open.server.close();
  };
  const sweepIdle = async () => {
    const cutoff = now() - idleMs;
    for (const [id, open] of sessions) if (open.lastSeen < cutoff) await drop(id);
  };
  // A session whose token was revoked refuses every request (the bearer check runs first) but
  // would hold its slot until it idles out, so the agent's reissued token would meet a full cap.
  // When a cap refuses an agent, its own sessions whose token no longer authenticates go: at most
  // its per-agent cap of lookups, and at most once a second per agent, so a flood of refused
  // opens cannot turn into a flood of token lookups.
  const lastSweep = new Map<string, number>();
  const sweepRevoked = async (actor: Actor) => {
    const key = JSON.stringify([actor.tenant, actor.id]);
    const at = now();
    for (const [agent, swept] of lastSweep) if (at - swept >= 1_000) lastSweep.delete(agent);
    if (lastSweep.has(key)) return;
    lastSweep.set(key, at);
    for (const [id, open] of [...sessions]) {
      if (open.agent.tenant !== actor.tenant || open.agent.id !== actor.id) continue;
      if (!(await open.stillValid())) await drop(id);
    }
  };

  async function handle(request: Request): Promise<Response> {
    const match = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/.exec(request.headers.get('authorization') ?? '');
    if (!match) return unauthenticated('send the agent token as Authorization: Bearer <token>');
    const actor = await options.authenticate(match[1]!);
    if (!actor) return unauthenticated('the bearer token is not valid');
    if (actor.kind !== 'agent') return problem(403, 'forbidden', 'only an agent token opens an MCP session');

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
    // reserve() counts the slot at once, before any await, so concurrent initializes cannot overshoot a cap.
    let slot = ledger.reserve(actor);
    if (slot.kind === 'refused') {
      await sweepRevoked(actor);
      slot = ledger.reserve(actor);
      if (slot.kind === 'refused') return sessionRefused(slot.scope, actor);
    }
    const reserved = slot;
    const token = match[1]!;
    const stillValid = async () => {
      const current = await options.authenticate(token);
      return current?.kind === 'agent' && current.id === actor.id && current.tenant === actor.tenant;
    };
    let server: Server;
    try {
      server = createMcpServer(
        engine,
        {
          tenant: actor.tenant,
          agent: actor.id,
          runId: newId('run'),
          ...(options.resource !== undefined ? { resource: options.resource } : {}),
        },
        {
          ...(options.logger ? { logger: options.logger } : {}),
          ...(options.approvalUrl ? { approvalUrl: options.approvalUrl } : {}),
        },
      );
    } catch (error) {
      reserved.release();
      if (error instanceof BindingError) options.onBindingError?.(error);
      throw error;
    }
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, {
          transport,
          server,
          agent: actor,
          release: reserved.release,
          stillValid,
          lastSeen: now(),
        });
      },
      onsessionclosed: (id) => drop(id),
    });
    try {
      await server.connect(transport);
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      // An initialize the transport refused opened no session: give its slot back.
      if (transport.sessionId === undefined || !sessions.has(transport.sessionId)) {
        reserved.release();
        await server.close();
      }
    }
  }

  // Retry-After: when the first session of the full scope would be closed as idle, in whole seconds.
  function sessionRefused(scope: McpSessionScope, actor: Actor): Response {
    const inScope = [...sessions.values()].filter(
      (s) =>
        scope === 'server' ||
        (s.agent.tenant === actor.tenant && (scope === 'tenant' || s.agent.id === actor.id)),
    );
    const freeAt = Math.min(...inScope.map((s) => s.lastSeen + idleMs));
    const seconds = Number.isFinite(freeAt) ? Math.ceil((freeAt - now()) / 1000) : 1;
    const retryAfter = String(Math.min(Math.max(seconds, 1), Math.ceil(idleMs / 1000)));
    const whose = { agent: 'this agent has', tenant: 'this tenant has', server: 'the server has' }[scope];
    return problem(
      scope === 'server' ? 503 : 429,
      'rate_limited',
      `${whose} as many open MCP sessions as allowed; close one or try again later`,
      { body: { scope }, headers: { 'retry-after': retryAfter } },
    );
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
