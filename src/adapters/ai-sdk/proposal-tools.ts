import { type JSONSchema7, jsonSchema, type Tool, tool } from 'ai';
import type { Engine, EngineKind } from '../../engine/create-engine.js';
import type { BindingSource } from '../shared/agent-binding.js';
import { type OperationToolOptions, operationTools } from '../shared/operation-tools.js';

/** A proposing AI SDK tool: any JSON in, the safe reply text out. */
export type ProposalTool = Tool<unknown, string>;

/**
 * Turns the engine's operations into AI SDK `tool()` definitions for one agent run, keyed by tool
 * name (`propose_invoice_pay`), ready for `generateText` / `streamText` / `ToolLoopAgent`. `execute`
 * proposes and returns the proposal id, short hash and a one-line summary; a refused request
 * returns the operation's `modelMessage` so the next step can correct it. There is no
 * `needsApproval`: approval is a separate, authenticated request to the application.
 *
 * The input schema is the operation's request as JSON Schema through `jsonSchema()` without a
 * validator, so the SDK passes the model's JSON through and the engine parses it strictly. A
 * binding function receives `experimental_context` of the call. Works
 * with `ai` 5 and 6 (both run on Node 20; the tests run 6).
 *
 * @example
 * const { text } = await generateText({ model, tools: proposalTools(engine, binding), stopWhen: [stepCountIs(5), stopAtProposal],
 *   prompt: 'Pay invoice inv-104' });
 */
export function proposalTools<E extends Engine>(
  engine: E,
  binding: BindingSource<unknown>,
  options: OperationToolOptions<EngineKind<E>> = {},
): Record<string, ProposalTool> {
  const tools: Record<string, ProposalTool> = {};
  for (const operationTool of operationTools<unknown>(engine, binding, options)) {
    tools[operationTool.name] = tool<unknown, string>({
      description: operationTool.description,
      inputSchema: jsonSchema<unknown>(operationTool.parameters as JSONSchema7),
      execute: async (input: unknown, execution: { readonly experimental_context?: unknown }) =>
        (await operationTool.propose(input, execution.experimental_context)).text,
    });
  }
  return tools;
}
