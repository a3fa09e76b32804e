import type { RunnableConfig } from '@langchain/core/runnables';
import type { Engine } from '../../engine/create-engine.js';
import type { BindingSource } from '../shared/agent-binding.js';
import { type ReadToolOptions, readToolHandles } from '../shared/read-tools.js';
import { ReadTool } from './read-tool.js';

/**
 * Turns the engine's read tools (`createEngine({ readTools })`) into LangChain tools, to pass
 * beside {@link proposalTools} to a `ToolNode` or agent. Each call reads for the binding's tenant,
 * section, run and agent (the same binding as the proposal tools; a function receives the call's
 * `RunnableConfig`), never for anything the model sends, and is audited in the tenant's chain.
 * `proposalMade` is false after a read, so the graph goes back to the model with the rows.
 *
 * @example
 * const tools = [...readTools(engine, binding), ...proposalTools(engine, binding)];
 */
export function readTools(
  engine: Engine,
  binding: BindingSource<RunnableConfig>,
  options: ReadToolOptions = {},
): ReadTool[] {
  return readToolHandles<RunnableConfig>(engine, binding, options).map((handle) => new ReadTool(handle));
}
