import { type FunctionTool, type JsonSchemaDefinition, type RunContext, tool } from '@openai/agents';
import type { Engine, EngineKind } from '../../engine/create-engine.js';
import { BindingError, type BindingSource } from '../shared/agent-binding.js';
import { type OperationToolOptions, operationTools } from '../shared/operation-tools.js';

const ours = new WeakSet<object>();

// The SDK types a non-strict JSON Schema with `additionalProperties: true`, but forwards the object
// unchanged; the model should see the operation's own `additionalProperties: false`.
type NonStrictParameters = Extract<JsonSchemaDefinition['schema'], { additionalProperties: true }>;

/** A proposing function tool: JSON Schema parameters, a string result. */
export type ProposalTool<TContext = unknown> = FunctionTool<TContext, NonStrictParameters, string>;

// A binding error is the application's: rethrown so the run rejects with it. Any other error keeps
// the SDK's usual answer to the model.
function toolError(_context: unknown, error: unknown): string {
  if (error instanceof BindingError) throw error;
  return `An error occurred while running the tool. Please try again. Error: ${error instanceof Error ? error.toString() : String(error)}`;
}

/** True for a tool built by {@link proposalTools}. */
export function isProposalTool(candidate: { readonly name: string }): boolean {
  return ours.has(candidate);
}

/**
 * Turns the engine's operations into OpenAI Agents SDK function tools for one run. Calling a tool
 * proposes — `engine.proposals.propose` with the binding's tenant, resource, run id and agent principal —
 * and returns a short safe text: proposal id, short hash, a one-line summary and "waiting for
 * approval". Nothing executes, so there is no `needsApproval`, no interruption and no `RunState`
 * to keep: the run ends normally and the proposal in the store is the only durable state.
 * A request the operation refuses comes back as its `modelMessage`, so the model corrects itself
 * within the same run.
 *
 * The binding is fixed here, or a function of the run's context (`run(agent, input, { context })`,
 * never sent to the model), so one agent built at startup serves every run. A binding function
 * that throws or returns no run id, tenant or agent is the application's mistake: `run()` rejects
 * with a `BindingError` (after `options.onBindingError`), and the model is never asked to retry.
 *
 * The parameters are the operation's request as JSON Schema with `strict: false`: the SDK passes
 * the model's JSON through untouched and the engine parses it strictly (an extra key is
 * `invalid_request` naming the field, never silently dropped).
 *
 * @example
 * const agent = new Agent({
 *   name: 'Payables assistant',
 *   instructions: 'Help with supplier invoices.',
 *   tools: proposalTools(engine, { tenant: 'acme', resource: 'invoice:*', runId, agent: 'agent:acme-assistant' }),
 *   toolUseBehavior: stopAtProposal,
 * });
 * const result = await run(agent, 'Pay invoice inv-104');
 */
export function proposalTools<TContext = unknown, E extends Engine = Engine>(
  engine: E,
  binding: BindingSource<TContext>,
  options: OperationToolOptions<EngineKind<E>> = {},
): ProposalTool<TContext>[] {
  return operationTools<TContext>(engine, binding, options).map((operationTool) => {
    const made = tool<NonStrictParameters, TContext, string>({
      name: operationTool.name,
      description: operationTool.description,
      parameters: operationTool.parameters as unknown as NonStrictParameters,
      strict: false,
      errorFunction: toolError,
      execute: async (input: unknown, runContext?: RunContext<TContext>) =>
        (await operationTool.propose(input, runContext?.context as TContext)).text,
    });
    ours.add(made);
    return made;
  });
}
