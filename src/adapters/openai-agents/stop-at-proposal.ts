import type { ToolToFinalOutputFunction } from '@openai/agents';
import { isProposalTool } from './proposal-tools.js';

// The summary is a JSON string (application text that may repeat model-chosen values): whatever
// it holds, including ". Status: …", stays inside its quotes and cannot pass for the status.
const PROPOSED =
  /^Proposal (prp_[0-9a-z]+) \(short hash ([0-9a-f]{12})\) created: ("(?:[^"\\]|\\.)*")\. Status: (waiting for approval by a human; nothing has been executed|approved by a standing grant; ([^.]*))\. Do not propose/;

/**
 * A `toolUseBehavior` that ends the run as soon as a proposing tool created a proposal: the final
 * output lists what now waits for a human (summary, proposal id, short hash) — or, when a standing
 * grant approved it inside the call, what its execution came to — and no further model
 * call is spent paraphrasing it. When every proposing call was refused (`invalid_request`), the
 * run goes on so the model can correct its request within the same run.
 *
 * @example
 * new Agent({ name, instructions, tools: proposalTools(engine, binding), toolUseBehavior: stopAtProposal });
 */
export const stopAtProposal: ToolToFinalOutputFunction = (_context, toolResults) => {
  const lines: string[] = [];
  for (const result of toolResults) {
    if (
      result.type !== 'function_output' ||
      !isProposalTool(result.tool) ||
      typeof result.output !== 'string'
    )
      continue;
    const match = PROPOSED.exec(result.output);
    if (!match) continue;
    // Under a standing grant the call already executed: the final output says what happened.
    lines.push(
      match[5] !== undefined
        ? `Approved by a standing grant: ${match[3]} (proposal ${match[1]}, short hash ${match[2]}); ${match[5]}.`
        : `Waiting for approval: ${match[3]} (proposal ${match[1]}, short hash ${match[2]}).`,
    );
  }
  if (lines.length === 0) return { isFinalOutput: false, isInterrupted: undefined };
  return { isFinalOutput: true, isInterrupted: undefined, finalOutput: lines.join('\n') };
};
