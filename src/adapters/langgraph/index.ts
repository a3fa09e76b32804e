/**
 * `countersign/langgraph`: operations as LangChain tools that propose instead of interrupting the
 * graph, and the handback for the next turn as messages. Peer dependencies: `@langchain/core`,
 * `@langchain/langgraph`.
 *
 * @packageDocumentation
 */
export type { AgentBinding, BindingSource } from '../shared/agent-binding.js';
export {
  BindingError,
  bindingErrorOf,
  type BindingErrorHook,
  type BindingErrorReason,
  type BindingField,
} from '../shared/errors.js';
export type { HandbackContext, HandbackRequest } from '../shared/handback-context.js';
export { handbackContext } from '../shared/handback-context.js';
export type { OperationToolOptions } from '../shared/operation-tools.js';
export { toolNameOf } from '../shared/tool-name.js';
export { handbackMessages } from './handback-messages.js';
export { proposalMade } from './proposal-made.js';
export { type ProposalArtifact, ProposalTool } from './proposal-tool.js';
export { proposalTools } from './proposal-tools.js';
export { type ReadArtifact, ReadTool } from './read-tool.js';
export { readTools } from './read-tools.js';
export type { ReadToolOptions } from '../shared/read-tools.js';
