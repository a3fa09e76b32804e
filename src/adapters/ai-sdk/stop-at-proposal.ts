import type { StepResult, ToolSet } from 'ai';

const PROPOSED = /^Proposal prp_[0-9a-z]+ \(short hash [0-9a-f]{12}\) created: /;

/**
 * A `stopWhen` condition that ends the loop after a step in which a proposing tool created a
 * proposal: its reply already says what waits for approval. Steps whose proposals were all
 * refused go on, so the model can correct its request. Combine it with a step limit.
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
  return last.toolResults.some((result: { readonly toolName: string; readonly output?: unknown }) => {
    return (
      result.toolName.startsWith('propose_') &&
      typeof result.output === 'string' &&
      PROPOSED.test(result.output)
    );
  });
}
