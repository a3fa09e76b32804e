import { type JSONSchema7, jsonSchema, type Tool, tool } from 'ai';
import type { Engine, EngineKind } from '../../engine/create-engine.js';
import type { BindingSource } from '../shared/agent-binding.js';
import { type OperationToolOptions, operationTools } from '../shared/operation-tools.js';

/** A proposing AI SDK tool: any JSON in, the safe reply text out. */
export type ProposalTool = Tool<unknown, string>;

/**
 * What the SDK hands a tool's `execute` about the call: `experimental_context` in ai 5 and 6,
 * `context` (the tool's entry of `toolsContext`) in ai 7, which removed `experimental_context`.
 */
interface CallOptions {
  readonly experimental_context?: unknown;
  readonly context?: unknown;
}

/**
 * Options for `generateText` / `streamText` that hand a binding function its context. Opaque on
 * purpose: which option carries it depends on the installed `ai` major, and a type naming them
 * would not compile against the others.
 */
export interface BindingCallOptions {
  readonly [BINDING_CALL_OPTIONS]?: never;
}
declare const BINDING_CALL_OPTIONS: unique symbol;

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
export function proposalTools<E extends Engine, Context = unknown>(
  engine: E,
  binding: BindingSource<Context>,
  options: OperationToolOptions<EngineKind<E>> = {},
): Record<string, ProposalTool> {
  const tools: Record<string, ProposalTool> = {};
  for (const operationTool of operationTools<Context>(engine, binding, options)) {
    // No explicit type arguments: ai 7's tool() takes three, ai 5 and 6 two.
    tools[operationTool.name] = tool({
      description: operationTool.description,
      inputSchema: jsonSchema<unknown>(operationTool.parameters as JSONSchema7),
      execute: async (input: unknown, call: CallOptions): Promise<string> => {
        // The application passed it for this binding function (bindingContext); the binding checks it.
        const context = (call.context ?? call.experimental_context) as Context;
        return (await operationTool.propose(input, context)).text;
      },
    });
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
export function bindingContext(
  tools: Readonly<Record<string, ProposalTool>>,
  context: unknown,
): BindingCallOptions {
  const toolsContext: Record<string, unknown> = {};
  for (const name of Object.keys(tools)) toolsContext[name] = context;
  // Typed opaque on purpose (see BindingCallOptions): it spreads into a call of any major.
  return { experimental_context: context, toolsContext } as BindingCallOptions;
}
