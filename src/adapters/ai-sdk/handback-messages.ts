import type { ModelMessage } from 'ai';
import type { Engine } from '../../engine/create-engine.js';
import { type HandbackRequest, handbackContext } from '../shared/handback-context.js';

/**
 * The bounded handback for the next turn as AI SDK messages: one system message with the
 * operations' own safe text about each proposal of the earlier run(s), or none.
 *
 * @example
 * const context = await handbackMessages(engine, { tenant: 'acme', runId: previousRunId });
 * await generateText({ model, tools, messages: [...context, { role: 'user', content: 'Did it go through?' }] });
 */
export async function handbackMessages(engine: Engine, request: HandbackRequest): Promise<ModelMessage[]> {
  const { text } = await handbackContext(engine, request);
  return text === '' ? [] : [{ role: 'system', content: text }];
}
