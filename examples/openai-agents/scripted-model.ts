import type {
  AgentInputItem,
  Model,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  StreamEvent,
} from '@openai/agents';
import { Usage } from '@openai/agents';

type ScriptedOutput = Extract<StreamEvent, { type: 'response_done' }>['response']['output'];

/** What a scripted model sees of the conversation: enough to decide its next step, nothing else. */
export interface ScriptView {
  /** The latest user message. */
  readonly input: string;
  /** System instructions and system messages (the handback arrives here). */
  readonly system: string;
  /** Tool results since the latest user message, oldest first. */
  readonly toolResults: readonly string[];
  /** Names of the tools offered. */
  readonly tools: readonly string[];
}

/** One model step: call a tool, or answer. */
export type ScriptStep =
  | { readonly toolCall: { readonly name: string; readonly arguments: Readonly<Record<string, unknown>> } }
  | { readonly text: string };

/** A deterministic stand-in for a model: the same script drives every framework's scripted model. */
export type ModelScript = (view: ScriptView) => ScriptStep;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : ''))
      .join('');
  }
  return '';
}

function viewOf(request: ModelRequest): ScriptView {
  const items: AgentInputItem[] =
    typeof request.input === 'string' ? [{ role: 'user', content: request.input }] : request.input;
  let input = '';
  let toolResults: string[] = [];
  const system = request.systemInstructions ? [request.systemInstructions] : [];
  for (const item of items) {
    if ('role' in item && item.role === 'user') {
      input = textOf(item.content);
      toolResults = [];
    } else if ('role' in item && item.role === 'system') {
      system.push(textOf(item.content));
    } else if (item.type === 'function_call_result') {
      toolResults.push(typeof item.output === 'string' ? item.output : textOf([item.output]));
    }
  }
  const tools = request.tools.map((t) => t.name);
  return { input, system: system.join('\n'), toolResults, tools };
}

/**
 * A scripted {@link Model} for the OpenAI Agents SDK: no network, no randomness. Each call turns
 * the request into a {@link ScriptView} and answers with the script's step as a Responses-style
 * `function_call` or assistant `message` item.
 */
export class ScriptedModel implements Model {
  readonly #script: ModelScript;
  #calls = 0;

  constructor(script: ModelScript) {
    this.#script = script;
  }

  /** How many times the model was called. */
  get calls(): number {
    return this.#calls;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const { output } = this.#respond(request);
    return {
      usage: new Usage({ requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
      output,
      responseId: `resp_${this.#calls}`,
    };
  }

  #respond(request: ModelRequest): { output: ScriptedOutput } {
    this.#calls += 1;
    const step = this.#script(viewOf(request));
    const output: ScriptedOutput =
      'toolCall' in step
        ? [
            {
              type: 'function_call',
              callId: `call_${this.#calls}`,
              name: step.toolCall.name,
              arguments: JSON.stringify(step.toolCall.arguments),
              status: 'completed',
            },
          ]
        : [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: step.text }],
            },
          ];
    return { output };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const { output } = this.#respond(request);
    yield {
      type: 'response_done',
      response: {
        id: `resp_${this.#calls}`,
        usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 },
        output,
      },
    };
  }
}

/** A {@link ModelProvider} that always returns the same scripted model, whatever the model name. */
export class ScriptedModelProvider implements ModelProvider {
  constructor(readonly model: ScriptedModel) {}
  getModel(): Model {
    return this.model;
  }
}
