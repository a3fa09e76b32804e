/**
 * `countersign/openai-agents`: operations as OpenAI Agents SDK tools that propose instead of
 * pausing the run, and the handback for the next turn. Peer dependency: `@openai/agents`.
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
export { isProposalTool, type ProposalTool, proposalTools } from './proposal-tools.js';
export { type ReadFunctionTool, readTools } from './read-tools.js';
export type { ReadToolOptions } from '../shared/read-tools.js';
export { stopAtProposal } from './stop-at-proposal.js';
