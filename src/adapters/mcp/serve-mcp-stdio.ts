import type { Readable, Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Engine } from '../../engine/create-engine.js';
import type { Logger } from '../../engine/engine-context.js';
import { createMcpServer, type McpServerOptions } from './create-mcp-server.js';
import type { McpSession } from './mcp-session.js';

/**
 * Serves one MCP session over stdio (what `countersign mcp` runs) and resolves when the client
 * disconnects or `signal` aborts. Only MCP messages go to `stdout`; log to stderr.
 */
export async function serveMcpStdio(
  engine: Engine,
  session: McpSession,
  io: {
    readonly stdin?: Readable;
    readonly stdout?: Writable;
    readonly signal?: AbortSignal;
    /** Where failed tool calls are logged (never stdout). */
    readonly logger?: Logger;
    /** The console page of a proposal (see `McpServerOptions.approvalUrl`). */
    readonly approvalUrl?: McpServerOptions['approvalUrl'];
  } = {},
): Promise<void> {
  const server = createMcpServer(engine, session, {
    ...(io.logger ? { logger: io.logger } : {}),
    ...(io.approvalUrl ? { approvalUrl: io.approvalUrl } : {}),
  });
  const transport = new StdioServerTransport(io.stdin, io.stdout);
  const closed = new Promise<void>((done) => {
    server.onclose = () => done();
  });
  await server.connect(transport);
  const stdin = io.stdin ?? process.stdin;
  const ended = () => void server.close();
  stdin.once('end', ended);
  const abort = () => void server.close();
  io.signal?.addEventListener('abort', abort, { once: true });
  if (io.signal?.aborted) await server.close();
  await closed;
  stdin.off('end', ended);
  io.signal?.removeEventListener('abort', abort);
}
