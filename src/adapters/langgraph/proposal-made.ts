import type { BaseMessage } from '@langchain/core/messages';
import { BindingError } from '../shared/agent-binding.js';
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
 * what waits for approval, or what a standing grant's execution came to) instead of spending a
 * model call to paraphrase it; when every proposing call was refused (`invalid_request`,
 * `resource_mismatch`, `rate_limited`), route back to the model so it can correct its request.
 *
 * A tool whose binding was unusable (no run id, no tenant…) is the application's mistake, not the
 * model's: `proposalMade` throws it as a `BindingError`, so `graph.invoke` rejects with it and
 * the model gets no further call.
 *
 * @example
 * graph.addConditionalEdges('tools', (state) => (proposalMade(state.messages) ? END : 'agent'));
 */
export function proposalMade(messages: readonly BaseMessage[]): boolean {
  let made = false;
  for (let i = messages.length - 1; i >= 0; i -= 1) {
    const message = messages[i];
    if (message?.getType() !== 'tool') break;
    const artifact = artifactOf(message);
    if (artifact?.countersign === 'binding_error') throw new BindingError(artifact.field, artifact.reason);
    if (artifact?.countersign === 'proposed') made = true;
  }
  return made;
}
