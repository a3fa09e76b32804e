import type { StepResult, ToolSet } from 'ai';
import { BindingError } from '../shared/agent-binding.js';

const PROPOSED = /^Proposal prp_[0-9a-z]+ \(short hash [0-9a-f]{12}\) created: /;

/**
 * A `stopWhen` condition that ends the loop after a step in which a proposing tool created a
 * proposal: its reply already says what waits for approval (or, under a standing grant, what the
 * execution came to). Steps whose proposals were all refused (`invalid_request`,
 * `resource_mismatch`, `rate_limited`) go on, so the model can correct its request. Combine it
 * with a step limit.
 *
 * A tool whose binding was unusable (no run id, no tenant…) is the application's mistake, not the
 * model's: the condition throws that `BindingError`, so `generateText` rejects with it and the
 * model gets no further call.
 *
 * @example
 * await generateText({ model, tools, stopWhen: [stepCountIs(5), stopAtProposal], prompt });
 */
export function stopAtProposal<TOOLS extends ToolSet>({
  steps,
}: {
  readonly steps: readonly StepResult<TOOLS>[];
}): boolean {
  const last = steps.at(-1);
  if (!last) return false;
  for (const part of last.content) {
    if (part.type === 'tool-error' && part.error instanceof BindingError) throw part.error;
  }
  return last.toolResults.some((result: { readonly toolName: string; readonly output?: unknown }) => {
    return (
      result.toolName.startsWith('propose_') &&
      typeof result.output === 'string' &&
      PROPOSED.test(result.output)
    );
  });
}
