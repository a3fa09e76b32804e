import { type JSONSchema7, jsonSchema, tool } from 'ai';
import type { Engine } from '../../engine/create-engine.js';
import type { BindingSource } from '../shared/agent-binding.js';
import { type OperationTool, type OperationToolOptions, operationTools } from '../shared/operation-tools.js';

/** The per-call context a binding function reads: an object the application fills, never the model. */
export type ToolContext = Record<string, unknown>;

/**
 * What the SDK hands a tool's `execute` about the call: `experimental_context` in ai 5 and 6,
 * `context` (the tool's entry of `toolsContext`) in ai 7, which removed `experimental_context`.
 */
interface CallOptions<Context extends ToolContext> {
  readonly experimental_context?: unknown;
  readonly context?: Context;
}

// The SDK's `tool()` infers the type: `Tool<unknown, string>` in ai 5 and 6, and in ai 7 a tool
// whose context type is `Context`, so `toolsContext` type-checks. Explicit type arguments would
// compile against one major only (ai 7 added the third one).
function proposalTool<Context extends ToolContext>(operationTool: OperationTool<Context>) {
  return tool({
    description: operationTool.description,
    inputSchema: jsonSchema<unknown>(operationTool.parameters as JSONSchema7),
    execute: async (input: unknown, call: CallOptions<Context>): Promise<string> => {
      // The application passed it as this binding's context; the binding checks what it reads.
      const context = (call.context ?? call.experimental_context) as Context;
      return (await operationTool.propose(input, context)).text;
    },
  });
}

/** A proposing AI SDK tool: any JSON in, the safe reply text out. */
export type ProposalTool<Context extends ToolContext = ToolContext> = ReturnType<
  typeof proposalTool<Context>
>;

/**
 * Turns the engine's operations into AI SDK `tool()` definitions for one agent run, keyed by tool
 * name (`propose_invoice_pay`), ready for `generateText` / `streamText` / `ToolLoopAgent`. `execute`
 * proposes and returns the proposal id, short hash and a one-line summary; a refused request
 * returns the operation's `modelMessage` so the next step can correct it. There is no
 * `needsApproval`: approval is a separate, authenticated request to the application.
 *
 * The input schema is the operation's request as JSON Schema through `jsonSchema()` without a
 * validator, so the SDK passes the model's JSON through and the engine parses it strictly.
 * A binding function receives the call's context: pass it with {@link bindingContext} (ai 5 and 6
 * read `experimental_context`, ai 7 a `toolsContext` entry per tool). Works with `ai` 5, 6 and 7.
 *
 * @example
 * const { text } = await generateText({ model, tools: proposalTools(engine, binding), stopWhen: [stepCountIs(5), stopAtProposal],
 *   prompt: 'Pay invoice inv-104' });
 */
export function proposalTools<Context extends ToolContext = ToolContext>(
  engine: Engine,
  binding: BindingSource<Context>,
  options: OperationToolOptions = {},
): Record<string, ProposalTool<Context>> {
  const tools: Record<string, ProposalTool<Context>> = {};
  for (const operationTool of operationTools<Context>(engine, binding, options)) {
    tools[operationTool.name] = proposalTool(operationTool);
  }
  return tools;
}

/**
 * The `generateText` / `streamText` options that hand `context` to the tools' binding function,
 * whichever `ai` major is installed: `experimental_context` (ai 5 and 6) and `toolsContext` with
 * the same entry for every proposing tool (ai 7). Spread them into the call.
 *
 * @example
 * const tools = proposalTools(engine, (context: { runId: string }) => ({ tenant: 'acme', agent: 'agent:acme-assistant', runId: context.runId }));
 * await generateText({ model, tools, ...bindingContext(tools, { runId: newId('run') }), prompt });
 */
export function bindingContext<Context extends ToolContext>(
  tools: Readonly<Record<string, ProposalTool<Context>>>,
  context: NoInfer<Context>,
): { readonly experimental_context: Context; readonly toolsContext: Record<string, Context> } {
  const toolsContext: Record<string, Context> = {};
  for (const name of Object.keys(tools)) toolsContext[name] = context;
  return { experimental_context: context, toolsContext };
}
