/**
 * `countersign/openai-agents`: operations as OpenAI Agents SDK tools that propose instead of
 * pausing the run, and the handback for the next turn. Peer dependency: `@openai/agents`.
 *
 * @packageDocumentation
 */
export * from '../shared/public.js';
export { handbackMessages } from './handback-messages.js';
export { isProposalTool, type ProposalTool, proposalTools } from './proposal-tools.js';
export { type ReadFunctionTool, readTools } from './read-tools.js';
export { stopAtProposal } from './stop-at-proposal.js';
