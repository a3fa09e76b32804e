import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type CallToolResult,
  ListToolsRequestSchema,
  type RequestId,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Engine } from '../../engine/create-engine.js';
import { type Logger, silentLogger } from '../../engine/engine-context.js';
import { proposalHandback } from '../../engine/handback.js';
import { invalidRequest } from '../../engine/freeze-proposal.js';
import { newId } from '../../engine/ids.js';
import { readProposal } from '../../engine/read-scope.js';
import { StoreUnavailableError } from '../../store/store-errors.js';
import { StoreFaultError } from '../../store/store-fault.js';
import { operationTools } from '../shared/operation-tools.js';
import { summaryOf } from '../shared/tool-reply.js';
import type { McpSession } from './mcp-session.js';
import { mcpReadTools } from './mcp-read-tools.js';
import { type ToolCallParams, toolCallParams } from './tool-call-params.js';

/** The MCP server's name and version as clients see them. */
export const MCP_SERVER_INFO = Object.freeze({ name: 'countersign', version: '0.1.0' });

const GET_PROPOSAL: Tool = {
  name: 'get_proposal',
  description:
    "Reads one of your proposals: its status, its outcome once executed, and the application's handback text " +
    '(what happened and what to do next). Use it instead of proposing again.',
  inputSchema: {
    type: 'object',
    properties: {
      proposal_id: { type: 'string', description: 'The id a propose_* tool returned, e.g. prp_…' },
    },
    required: ['proposal_id'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
};

// Any tools/call reaches countersign's handler, which reads its params itself (toolCallParams).
const ToolsCallRequest = z.object({ method: z.literal('tools/call'), params: z.unknown() });

function text(value: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError: true } : {}) };
}

/**
 * An MCP server for one session: a `propose_<kind>` tool per operation (dots in kinds become
 * underscores) whose input schema is the operation's request as JSON Schema, plus `get_proposal`.
 * Proposing tools never execute; a refused request returns the operation's `modelMessage` as a
 * tool error the model can act on. The session's tenant, agent, run id and resource come from the
 * host that authenticated it, never from tool arguments; a session without a usable tenant, agent
 * or run id (blank, or the text "undefined"/"null") throws `BindingError` here, before any tool exists.
 *
 * It is built on the SDK's low-level `Server` rather than `McpServer`, whose `registerTool` takes
 * zod shapes and refuses bad input with its own message before the handler runs: countersign
 * wants the operation's JSON Schema shown and its own strict parse (and message) to decide. For
 * the same reason a malformed `tools/call` (arguments that are not an object, no tool name) is
 * refused as `invalid_request` naming the field, like any other bad argument, not with the SDK's
 * JSON-RPC error.
 *
 * @example
 * const server = createMcpServer(engine, { tenant: 'acme', agent: 'agent:acme-assistant', runId: newId('run'), resource: 'invoice:*' });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpServer(engine: Engine, session: McpSession, options: McpServerOptions = {}): Server {
  const logger = options.logger ?? silentLogger;
  const tools = operationTools(
    engine,
    {
      tenant: session.tenant,
      agent: session.agent,
      runId: session.runId,
      ...(session.resource !== undefined ? { resource: session.resource } : {}),
      ...(session.section !== undefined ? { section: session.section } : {}),
    },
    session.operations !== undefined ? { operations: session.operations } : {},
  );
  const byName = new Map(tools.map((t) => [t.name, t]));
  const reads = mcpReadTools(engine, session);
  const server = new Server(
    { ...MCP_SERVER_INFO },
    {
      capabilities: { tools: {} },
      instructions:
        `You propose operations for tenant ${session.tenant}; a human approves each exact proposal and the application ` +
        `executes it. Proposing never executes. Your run id is ${session.runId}. Check a proposal with get_proposal; read tools return your tenant's data only.`,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [
      ...tools.map(
        (t): Tool => ({
          name: t.name,
          description: t.description,
          inputSchema: t.parameters,
          annotations: {
            readOnlyHint: false,
            destructiveHint: false,
            idempotentHint: false,
            openWorldHint: false,
          },
        }),
      ),
      GET_PROPOSAL,
      ...reads.listed,
    ],
  }));
  const onCall = async (
    request: z.infer<typeof ToolsCallRequest>,
    extra: { readonly requestId: RequestId },
  ): Promise<CallToolResult> => {
    const params = toolCallParams(request.params);
    try {
      return await callTool(params, extra.requestId);
    } catch (error) {
      // The database is unavailable for a while: nothing was written, and the model may try later.
      if (error instanceof StoreUnavailableError) {
        const seconds = error instanceof StoreFaultError ? error.retryAfterSeconds : 5;
        logger.warn(
          { tool: params.kind === 'call' ? params.name : undefined, tenant: session.tenant },
          'store unavailable',
        );
        return text(
          `store_unavailable: the approval store is unavailable for a while; nothing was proposed or executed by this call. Try again in ${seconds} s.`,
          true,
        );
      }
      // A bug or an I/O failure: the model gets a correlation id, never the error's text (table
      // names, SQL, paths); the operator finds the error under that id in the log.
      const correlationId = newId('cor');
      logger.error(
        {
          err: error,
          correlationId,
          ...(params.kind === 'call' ? { tool: params.name } : {}),
          tenant: session.tenant,
          agent: session.agent,
        },
        'mcp tool call failed',
      );
      return text(
        `The call failed inside the server (correlation id ${correlationId}). Do not assume anything was proposed or executed: check with get_proposal or ask an operator before trying again.`,
        true,
      );
    }
  };
  // Server.setRequestHandler would check each call against the SDK's CallToolRequestSchema first
  // and answer a malformed one with its own zod text; Protocol's registers the handler as given.
  Protocol.prototype.setRequestHandler.call(server, ToolsCallRequest, onCall);
  const callTool = async (params: ToolCallParams, requestId: RequestId): Promise<CallToolResult> => {
    if (session.stillAuthenticated && !(await session.stillAuthenticated())) {
      return text(
        'The request was not accepted (unauthenticated): the agent token of this session is no longer valid. Nothing was proposed or read.',
        true,
      );
    }
    if (params.kind === 'invalid') return text(invalidRequest(params.issues).modelMessage, true);
    const { name, arguments: args } = params;
    if (name === GET_PROPOSAL.name) return getProposal(engine, session, args);
    const read = reads.call(name, args);
    if (read) return read;
    const tool = byName.get(name);
    if (!tool)
      return text(
        `Unknown tool ${name}. Available: ${[...byName.keys(), GET_PROPOSAL.name, ...reads.listed.map((t) => t.name)].join(', ')}.`,
        true,
      );
    const reply = await tool.propose(args ?? {}, undefined);
    if (reply.kind !== 'proposed') return text(reply.text, true);
    const p = reply.proposal;
    const url = p.status === 'pending' ? options.approvalUrl?.(p) : undefined;
    if (url !== undefined) askToOpen(server, p, url, requestId, logger);
    return {
      content: [
        { type: 'text', text: url === undefined ? reply.text : `${reply.text} Approval page: ${url}` },
      ],
      structuredContent: {
        proposal_id: p.id,
        short_hash: p.short,
        status: p.status,
        summary: summaryOf(p),
        run_id: p.runId,
        ...(url === undefined ? {} : { approval_url: url }),
      },
    };
  };
  return server;
}

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** Where a tool call that fails inside the server is logged (default: silent). */
  readonly logger?: Logger;
  /**
   * The console page where a human decides a proposal (`countersign serve` passes its public URL's
   * `/proposals/:id?run=…`). With it, a pending proposal's tool result carries the link (in the
   * text and as `approval_url`), and a client that declared URL-mode elicitation is asked to open
   * it (`elicitation/create`, `mode: 'url'`). Without it, neither.
   */
  readonly approvalUrl?: (proposal: { readonly id: string; readonly runId: string }) => string | undefined;
}

/**
 * Hands the approval page to a client that declared URL-mode elicitation (MCP 2025-11-25), so it
 * can show the human the page. The tool result does not wait for the answer: the human's decision
 * comes much later, through the console, and is what counts; whether the client opened the page,
 * declined or never answered changes nothing, so the answer is only logged.
 */
function askToOpen(
  server: Server,
  proposal: { readonly id: string; readonly short: string },
  url: string,
  relatedRequestId: RequestId,
  logger: Logger,
): void {
  if (server.getClientCapabilities()?.elicitation?.url === undefined) return;
  server
    .elicitInput(
      {
        mode: 'url',
        elicitationId: proposal.id,
        url,
        message:
          `Proposal ${proposal.id} (short hash ${proposal.short}) is waiting for a human decision. ` +
          'Open the approval page to review exactly what it would do, then approve or decline it. Nothing is executed before that.',
      },
      { relatedRequestId },
    )
    .then(
      (answer) => logger.info({ proposalId: proposal.id, action: answer.action }, 'approval page elicited'),
      (error: unknown) =>
        logger.info(
          { proposalId: proposal.id, error: error instanceof Error ? error.message : String(error) },
          'approval page elicitation unanswered',
        ),
    );
}

async function getProposal(
  engine: Engine,
  session: McpSession,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const id = args?.['proposal_id'];
  const extra = Object.keys(args ?? {}).filter((k) => k !== 'proposal_id');
  if (typeof id !== 'string' || id === '' || extra.length > 0) {
    const issues = [
      ...(typeof id !== 'string' || id === '' ? ['$.proposal_id: a proposal id string is required'] : []),
      ...extra.map((k) => `$.${k}: unknown field`),
    ];
    return text(
      `The request was not accepted: ${issues.join('; ')}. Correct these fields and try again.`,
      true,
    );
  }
  // Scoped exactly like the HTTP API's reads: another tenant's proposal, and another agent's of
  // the same tenant, read exactly like a missing one.
  const proposal = await readProposal(
    engine,
    { tenant: session.tenant, id: session.agent, kind: 'agent' },
    id,
  );
  // Echoed at most 64 characters long: an id of a megabyte would only flood the model's context.
  if (!proposal) return text(`No proposal ${id.length > 64 ? `${id.slice(0, 63)}…` : id}.`, true);
  const handback = proposalHandback(engine.operations.get(proposal.operation), proposal);
  const view = {
    proposal_id: proposal.id,
    operation: proposal.operation,
    status: proposal.status,
    short_hash: proposal.short,
    summary: summaryOf(proposal),
    run_id: proposal.runId,
    outcome: proposal.outcome,
    handback,
  };
  // JSON.stringify leaves U+2028/U+2029 raw: escaped, the model's words in the view stay inside
  // JSON strings on one line, never a line of the transcript of their own.
  const json = JSON.stringify(view).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  return { content: [{ type: 'text', text: json }], structuredContent: view };
}
