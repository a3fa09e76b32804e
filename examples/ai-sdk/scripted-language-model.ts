import type { LanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

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

type LanguageModelV3 = Extract<LanguageModel, { readonly specificationVersion: 'v3' }>;
type CallOptions = Parameters<LanguageModelV3['doGenerate']>[0];
type GenerateResult = Awaited<ReturnType<LanguageModelV3['doGenerate']>>;

function textOf(parts: unknown): string {
  if (typeof parts === 'string') return parts;
  if (!Array.isArray(parts)) return '';
  return parts
    .map((part: { type?: unknown; text?: unknown }) =>
      part.type === 'text' && typeof part.text === 'string' ? part.text : '',
    )
    .join('');
}

function outputText(output: unknown): string {
  const o = output as { type?: unknown; value?: unknown };
  if (typeof o.value === 'string') return o.value;
  return JSON.stringify(o.value ?? null);
}

function viewOf(options: CallOptions): ScriptView {
  let input = '';
  let toolResults: string[] = [];
  const system: string[] = [];
  for (const message of options.prompt) {
    if (message.role === 'system') system.push(message.content);
    else if (message.role === 'user') {
      input = textOf(message.content);
      toolResults = [];
    } else if (message.role === 'tool') {
      for (const part of message.content)
        if (part.type === 'tool-result') toolResults.push(outputText(part.output));
    }
  }
  return { input, system: system.join('\n'), toolResults, tools: (options.tools ?? []).map((t) => t.name) };
}

const USAGE: GenerateResult['usage'] = {
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
};

/**
 * A scripted AI SDK language model, built on the SDK's own `MockLanguageModelV3`: no network, no
 * randomness. Each call turns the prompt into a {@link ScriptView} and answers with the script's
 * step as a `tool-call` or `text` part.
 */
export function scriptedLanguageModel(script: ModelScript): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    provider: 'countersign',
    modelId: 'scripted',
    doGenerate: async (options) => {
      calls += 1;
      const step = script(viewOf(options));
      if ('toolCall' in step) {
        return {
          content: [
            {
              type: 'tool-call',
              toolCallId: `call_${calls}`,
              toolName: step.toolCall.name,
              input: JSON.stringify(step.toolCall.arguments),
            },
          ],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: USAGE,
          warnings: [],
        };
      }
      return {
        content: [{ type: 'text', text: step.text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: USAGE,
        warnings: [],
      };
    },
  });
}
