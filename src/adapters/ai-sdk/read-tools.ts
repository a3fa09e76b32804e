import { type JSONSchema7, jsonSchema, type Tool, tool } from 'ai';
import type { Engine } from '../../engine/create-engine.js';
import type { BindingSource } from '../shared/agent-binding.js';
import { type ReadToolOptions, readToolHandles } from '../shared/read-tools.js';

interface CallContext {
  readonly experimental_context?: unknown;
  readonly context?: unknown;
}

/** A read AI SDK tool: any JSON in, the result as JSON text out. */
export type ReadTool = Tool<unknown, string>;

/**
 * Turns the engine's read tools (`createEngine({ readTools })`) into AI SDK `tool()` definitions
 * keyed by name, to spread beside {@link proposalTools}. Each call reads for the binding's tenant,
 * section, run and agent (the same binding as the proposal tools; a function receives the call's
 * context, passed with `bindingContext`), never for anything the model sends; it is audited in the tenant's chain
 * and answers with the result as JSON. Input the tool's strict schema refuses comes back as the
 * refusal text. `stopAtProposal` does not stop at a read.
 *
 * @example
 * await generateText({ model, stopWhen: [stepCountIs(5), stopAtProposal], prompt,
 *   tools: { ...readTools(engine, binding), ...proposalTools(engine, binding) } });
 */
export function readTools<Context = unknown>(
  engine: Engine,
  binding: BindingSource<Context>,
  options: ReadToolOptions = {},
): Record<string, ReadTool> {
  const tools: Record<string, ReadTool> = {};
  for (const handle of readToolHandles<Context>(engine, binding, options)) {
    // No explicit type arguments: ai 7's tool() takes three, ai 5 and 6 two.
    tools[handle.name] = tool({
      description: handle.description,
      inputSchema: jsonSchema<unknown>(handle.parameters as JSONSchema7),
      execute: async (input: unknown, call: CallContext): Promise<string> =>
        // ai 7 hands `context` (from bindingContext's toolsContext), ai 5 and 6 `experimental_context`.
        (await handle.read(input, (call.context ?? call.experimental_context) as Context)).text,
    });
  }
  return tools;
}
