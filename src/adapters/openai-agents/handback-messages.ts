import type { AgentInputItem } from '@openai/agents';
import type { Engine } from '../../engine/create-engine.js';
import { type HandbackRequest, handbackContext } from '../shared/handback-context.js';

/**
 * The bounded handback for the next turn as Agents SDK input items: one system message with the
 * operations' own safe text about each proposal of the earlier run(s), or none when there were no
 * proposals. Put them before the user's new message; the model learns what happened from the
 * application, it is never resumed to execute.
 *
 * @example
 * const context = await handbackMessages(engine, { tenant: 'acme', runId: previousRunId });
 * await run(agent, [...context, user('Did the payment go through?')]);
 */
export async function handbackMessages(engine: Engine, request: HandbackRequest): Promise<AgentInputItem[]> {
  const { text } = await handbackContext(engine, request);
  return text === '' ? [] : [{ type: 'message', role: 'system', content: text }];
}
