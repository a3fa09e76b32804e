/**
 * `countersign/ai-sdk`: operations as Vercel AI SDK tools whose `execute` proposes, and the
 * handback for the next turn as messages. Peer dependency: `ai` (majors 5, 6 and 7).
 *
 * @packageDocumentation
 */
export * from '../shared/public.js';
export { handbackMessages } from './handback-messages.js';
export {
  type BindingCallOptions,
  bindingContext,
  type ProposalTool,
  proposalTools,
} from './proposal-tools.js';
export { type ReadTool, readTools } from './read-tools.js';
export { stopAtProposal } from './stop-at-proposal.js';
