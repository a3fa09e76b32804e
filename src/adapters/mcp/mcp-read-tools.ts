import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Engine } from '../../engine/create-engine.js';
import { type ReadToolHandle, readToolHandles } from '../shared/read-tools.js';
import type { McpSession } from './mcp-session.js';

/** The engine's read tools for one MCP session: listed read-only, called for the session's scope. */
export interface McpReadTools {
  /** The tools as MCP lists them, annotated `readOnlyHint: true`. */
  readonly listed: readonly Tool[];
  /** Calls the named read tool, or `undefined` when no read tool has that name. */
  call(name: string, args: Record<string, unknown> | undefined): Promise<CallToolResult> | undefined;
}

/**
 * The read tools of an MCP session. The tenant, section, agent and run id are the session's (from
 * the agent token the host authenticated), never tool arguments; each call is audited. The result
 * is the JSON text, and `structuredContent.result` for clients that read structured output.
 */
export function mcpReadTools(engine: Engine, session: McpSession): McpReadTools {
  const handles: ReadToolHandle[] = readToolHandles(engine, {
    tenant: session.tenant,
    agent: session.agent,
    runId: session.runId,
    ...(session.section !== undefined ? { section: session.section } : {}),
  });
  const byName = new Map(handles.map((h) => [h.name, h]));
  return {
    listed: handles.map(
      (h): Tool => ({
        name: h.name,
        description: h.description,
        inputSchema: h.parameters,
        annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      }),
    ),
    call(name, args) {
      const handle = byName.get(name);
      if (!handle) return undefined;
      return handle.read(args ?? {}, undefined).then(
        (reply): CallToolResult =>
          reply.kind === 'read'
            ? {
                content: [{ type: 'text', text: reply.text }],
                structuredContent: { tool: name, result: reply.result },
              }
            : { content: [{ type: 'text', text: reply.text }], isError: true },
      );
    },
  };
}
