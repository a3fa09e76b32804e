import type { Engine, EngineKind } from '../../engine/create-engine.js';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { BindingSource } from '../shared/agent-binding.js';
import { type OperationToolOptions, operationTools } from '../shared/operation-tools.js';
import { ProposalTool } from './proposal-tool.js';

/**
 * Turns the engine's operations into LangChain tools for one agent run, usable in a LangGraph
 * `ToolNode` (or a prebuilt agent). Each tool proposes (tenant, resource, run id
 * and agent principal from the binding, never from the model) and answers with the proposal id,
 * short hash and a one-line summary. It replaces `interrupt()` before a tool and the
 * human-in-the-loop middleware: the graph never pauses, no checkpoint has to outlive the turn, and
 * a human's approval goes to the application, which executes exactly what was frozen.
 *
 * The binding is fixed here, or a function of each call's `RunnableConfig` (fill
 * `configurable` when you invoke the graph; the model never sees it), so a graph compiled once at
 * startup serves every run.
 *
 * A binding function that throws or returns no run id, tenant or agent is the application's
 * mistake: `options.onBindingError` sees the `BindingError`, the model reads a reply that asks it
 * for nothing, and {@link proposalMade} throws it so the invocation rejects.
 *
 * @example
 * // Once at startup, bound per invocation (never String(…) the run id: a missing one must fail):
 * const tools = proposalTools(engine, (config) => ({ tenant: 'acme', resource: 'invoice:*',
 *   runId: config.configurable?.['run_id'], agent: 'agent:acme-assistant' }), { onBindingError: report });
 * // a StateGraph with new ToolNode(tools), ending at proposalMade(state.messages) — see docs/adapters.md
 */
export function proposalTools<E extends Engine>(
  engine: E,
  binding: BindingSource<RunnableConfig>,
  options: OperationToolOptions<EngineKind<E>> = {},
): ProposalTool[] {
  return operationTools<RunnableConfig>(engine, binding, options).map((tool) => new ProposalTool(tool));
}
