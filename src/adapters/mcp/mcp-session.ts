/** Who an MCP session proposes as: an agent of one tenant, fixed when the session opens. */
export interface McpSession {
  readonly tenant: string;
  /** The agent principal, e.g. `agent:acme-assistant`. */
  readonly agent: string;
  /** The run id every proposal of this session carries (one per session unless the host sets one). */
  readonly runId: string;
  /**
   * The resource boundary of the session's proposals, e.g. `invoice:*`. Optional for operations
   * that name their own resource; required for those that do not.
   */
  readonly resource?: string;
  readonly section?: string | null;
  /** Only these operation kinds become tools (default: all that can be proposed). */
  readonly operations?: readonly string[];
  /**
   * Asked before every tool call; `false` refuses the call (`unauthenticated`). A session that
   * authenticated once when it opened (stdio: `countersign mcp`) passes a fresh lookup of its
   * token here, so revoking the token ends what the running session can do. Over HTTP every
   * request is authenticated anyway.
   */
  readonly stillAuthenticated?: () => Promise<boolean> | boolean;
}
