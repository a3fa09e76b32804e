import type { Actor } from '../../operation/actor.js';

/**
 * Resolves an agent's bearer token to its principal, or `undefined` for an unknown or revoked
 * token. `countersign serve` and `countersign mcp` pass the principal directory's
 * `authenticateBearer`; an embedding application passes its own lookup. Only `kind: 'agent'`
 * principals may open an MCP session.
 */
export type AgentAuthenticator = (token: string) => Promise<Actor | undefined> | Actor | undefined;
