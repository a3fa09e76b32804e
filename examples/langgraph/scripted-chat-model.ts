import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';

/** What a scripted model sees of the conversation (the same view in every framework's scripted model). */
export interface ScriptView {
  readonly input: string;
  readonly system: string;
  readonly toolResults: readonly string[];
  readonly tools: readonly string[];
}

/** One model step: call a tool, or answer. */
export type ScriptStep =
  | { readonly toolCall: { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> } }
  | { readonly text: string };

/** A deterministic stand-in for a model. */
export type ModelScript = (view: ScriptView) => ScriptStep;

function textOf(message: BaseMessage): string {
  const content: unknown = message.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
      .join('');
  return '';
}

/**
 * A scripted LangChain chat model: no network, no randomness. `bindTools` records the tool names;
 * each call turns the messages into a {@link ScriptView} and answers with the script's step as an
 * `AIMessage` (with `tool_calls` for a tool step).
 */
export class ScriptedChatModel extends BaseChatModel {
  readonly #script: ModelScript;
  #tools: string[] = [];
  #calls = 0;

  constructor(script: ModelScript) {
    super({});
    this.#script = script;
  }

  /** How many times the model was called. */
  get calls(): number {
    return this.#calls;
  }

  _llmType(): string {
    return 'countersign-scripted';
  }

  override bindTools(tools: BindToolsInput[]): this {
    this.#tools = tools.map((t) =>
      'name' in t ? String(t.name) : 'function' in t ? String(t.function.name) : '',
    );
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.#calls += 1;
    let input = '';
    let toolResults: string[] = [];
    const system: string[] = [];
    for (const message of messages) {
      const type = message.getType();
      if (type === 'human') {
        input = textOf(message);
        toolResults = [];
      } else if (type === 'system') system.push(textOf(message));
      else if (type === 'tool') toolResults.push(textOf(message));
    }
    const step = this.#script({ input, system: system.join('\n'), toolResults, tools: this.#tools });
    const message =
      'toolCall' in step
        ? new AIMessage({
            content: '',
            tool_calls: [
              {
                id: `call_${this.#calls}`,
                name: step.toolCall.name,
                args: { ...step.toolCall.arguments },
                type: 'tool_call',
              },
            ],
          })
        : new AIMessage(step.text);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}
