/**
 * `countersign/langgraph`: operations as LangChain tools that propose instead of interrupting the
 * graph, and the handback for the next turn as messages. Peer dependencies: `@langchain/core`,
 * `@langchain/langgraph`.
 *
 * @packageDocumentation
 */
export * from '../shared/public.js';
export { handbackMessages } from './handback-messages.js';
export { proposalMade } from './proposal-made.js';
export { type ProposalArtifact, ProposalTool } from './proposal-tool.js';
export { proposalTools } from './proposal-tools.js';
export { type ReadArtifact, ReadTool } from './read-tool.js';
export { readTools } from './read-tools.js';
