import { type FunctionTool, type JsonSchemaDefinition, type RunContext, tool } from '@openai/agents';
import type { Engine } from '../../engine/create-engine.js';
import type { BindingSource } from '../shared/agent-binding.js';
import { type ReadToolOptions, readToolHandles } from '../shared/read-tools.js';

// As for the proposal tools: the SDK forwards a non-strict JSON Schema unchanged, so the model
// sees the tool's own `additionalProperties: false`.
type NonStrictParameters = Extract<JsonSchemaDefinition['schema'], { additionalProperties: true }>;

/** A read function tool: JSON Schema parameters, the result as JSON text. */
export type ReadFunctionTool<TContext = unknown> = FunctionTool<TContext, NonStrictParameters, string>;

/**
 * Turns the engine's read tools (`createEngine({ readTools })`) into OpenAI Agents SDK function
 * tools. Each call reads for the binding's tenant, section, run and agent (the same binding as
 * {@link proposalTools}, fixed or a function of the run's context), never for anything the model
 * sends; it is audited in the tenant's chain and answers with the result as JSON. Input the tool's
 * strict schema refuses (an extra field included) comes back as the refusal text, so the model
 * can correct it. Read tools never end the run under `stopAtProposal`.
 *
 * @example
 * const agent = new Agent({ name, instructions, toolUseBehavior: stopAtProposal,
 *   tools: [...readTools(engine, binding), ...proposalTools(engine, binding)] });
 */
export function readTools<TContext = unknown>(
  engine: Engine,
  binding: BindingSource<TContext>,
  options: ReadToolOptions = {},
): ReadFunctionTool<TContext>[] {
  return readToolHandles<TContext>(engine, binding, options).map((handle) =>
    tool<NonStrictParameters, TContext, string>({
      name: handle.name,
      description: handle.description,
      parameters: handle.parameters as unknown as NonStrictParameters,
      strict: false,
      execute: async (input: unknown, runContext?: RunContext<TContext>) =>
        (await handle.read(input, runContext?.context as TContext)).text,
    }),
  );
}
