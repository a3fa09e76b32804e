import type { Engine, EngineKind } from '../../engine/create-engine.js';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { BindingSource } from '../shared/agent-binding.js';
import { type OperationToolOptions, operationTools } from '../shared/operation-tools.js';
import { ProposalTool } from './proposal-tool.js';

/**
 * Turns the engine's operations into LangChain tools for one agent run, usable in a LangGraph
 * `ToolNode`, `createReactAgent` or `createAgent`. Each tool proposes (tenant, resource, run id
 * and agent principal from the binding, never from the model) and answers with the proposal id,
 * short hash and a one-line summary. It replaces `interrupt()` before a tool and the
 * human-in-the-loop middleware: the graph never pauses, no checkpoint has to outlive the turn, and
 * a human's approval goes to the application, which executes exactly what was frozen.
 *
 * The binding is fixed here, or a function of each call's `RunnableConfig` (fill
 * `configurable` when you invoke the graph; the model never sees it), so a graph compiled once at
 * startup serves every run.
 *
 * @example
 * const tools = proposalTools(engine, { tenant: 'acme', resource: 'invoice:*', runId, agent: 'agent:acme-assistant' });
 * const graph = createReactAgent({ llm: model, tools });
 * // or once at startup, bound per invocation:
 * // (never String(…) the run id: a missing one must stay missing and fail closed)
 * const shared = proposalTools(engine, (config) => ({ tenant: 'acme', resource: 'invoice:*',
 *   runId: config.configurable?.['run_id'], agent: 'agent:acme-assistant' }));
 */
export function proposalTools<E extends Engine>(
  engine: E,
  binding: BindingSource<RunnableConfig>,
  options: OperationToolOptions<EngineKind<E>> = {},
): ProposalTool[] {
  return operationTools<RunnableConfig>(engine, binding, options).map((tool) => new ProposalTool(tool));
}
