import type { BaseMessage } from '@langchain/core/messages';
import type { ProposalArtifact } from './proposal-tool.js';

function artifactOf(message: BaseMessage): ProposalArtifact | undefined {
  if (message.getType() !== 'tool') return undefined;
  const artifact = (message as BaseMessage & { artifact?: unknown }).artifact;
  return typeof artifact === 'object' && artifact !== null && 'countersign' in artifact
    ? (artifact as ProposalArtifact)
    : undefined;
}

/**
 * True when the tool messages after the latest AI message include a new proposal. Use it in a
 * conditional edge after the tool node to end the turn at the proposal (the reply already says
 * what waits for approval) instead of spending a model call to paraphrase it; when every
 * proposing call was refused, route back to the model so it can correct its request.
 *
 * @example
 * graph.addConditionalEdges('tools', (state) => (proposalMade(state.messages) ? END : 'agent'));
 */
export function proposalMade(messages: readonly BaseMessage[]): boolean {
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.getType() !== 'tool') return false;
    if (artifactOf(message)?.countersign === 'proposed') return true;
  }
  return false;
}
