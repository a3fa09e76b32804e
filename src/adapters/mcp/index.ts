/**
 * `countersign/mcp`: countersign's MCP server — a `propose_<kind>` tool per operation and
 * `get_proposal` — over stdio (`countersign mcp`) or streamable HTTP (`countersign serve --mcp`,
 * or mounted on your own app). Each session is an agent of one tenant.
 *
 * @packageDocumentation
 */
export {
  BindingError,
  bindingErrorOf,
  type BindingErrorHook,
  type BindingErrorReason,
  type BindingField,
} from '../shared/errors.js';
export type { AgentAuthenticator } from './agent-authenticator.js';
export { attachMcp, type RouteHost } from './attach-mcp.js';
export { createMcpServer, MCP_SERVER_INFO, type McpServerOptions } from './create-mcp-server.js';
export { type McpHttpHandler, type McpHttpOptions, mcpHttpHandler } from './mcp-http-handler.js';
export type { McpSession } from './mcp-session.js';
export { serveMcpStdio } from './serve-mcp-stdio.js';
export { toolNameOf } from '../shared/tool-name.js';
