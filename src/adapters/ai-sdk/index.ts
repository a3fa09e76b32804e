/**
 * `countersign/ai-sdk`: operations as Vercel AI SDK tools whose `execute` proposes, and the
 * handback for the next turn as messages. Peer dependency: `ai` (majors 5, 6 and 7).
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
export {
  type BindingCallOptions,
  bindingContext,
  type ProposalTool,
  proposalTools,
} from './proposal-tools.js';
export { type ReadTool, readTools } from './read-tools.js';
export type { ReadToolOptions } from '../shared/read-tools.js';
export { stopAtProposal } from './stop-at-proposal.js';
