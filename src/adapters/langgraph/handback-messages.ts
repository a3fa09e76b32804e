import { SystemMessage } from '@langchain/core/messages';
import type { Engine } from '../../engine/create-engine.js';
import { type HandbackRequest, handbackContext } from '../shared/handback-context.js';

/**
 * The bounded handback for the next turn as LangChain messages: one `SystemMessage` with the
 * operations' own safe text about each proposal of the earlier run(s), or none. Prepend it to the
 * next turn's messages instead of resuming the graph with `Command({ resume })`.
 *
 * @example
 * const context = await handbackMessages(engine, { tenant: 'acme', runId: previousRunId });
 * await graph.invoke({ messages: [...context, new HumanMessage('Did the payment go through?')] });
 */
export async function handbackMessages(engine: Engine, request: HandbackRequest): Promise<SystemMessage[]> {
  const { text } = await handbackContext(engine, request);
  return text === '' ? [] : [new SystemMessage(text)];
}
