import { createRequire } from 'node:module';
import type { LanguageModel } from 'ai';

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

/** The part of a provider call this model reads; the same in specification v2 and v3. */
interface CallOptions {
  readonly prompt: readonly {
    readonly role: string;
    readonly content:
      | string
      | readonly { readonly type: string; readonly text?: unknown; readonly output?: unknown }[];
  }[];
  readonly tools?: readonly { readonly name: string }[];
}

type Content =
  | {
      readonly type: 'tool-call';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: string;
    }
  | { readonly type: 'text'; readonly text: string };

// ai 5 takes provider specification v2 only; ai 6 and 7 take v3 (and warn on v2).
const { version } = createRequire(import.meta.url)('ai/package.json') as { version: string };
const SPECIFICATION = Number.parseInt(version, 10) >= 6 ? 'v3' : 'v2';

function textOf(content: CallOptions['prompt'][number]['content']): string {
  if (typeof content === 'string') return content;
  return content
    .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : ''))
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
    if (message.role === 'system') system.push(textOf(message.content));
    else if (message.role === 'user') {
      input = textOf(message.content);
      toolResults = [];
    } else if (message.role === 'tool' && typeof message.content !== 'string') {
      for (const part of message.content)
        if (part.type === 'tool-result') toolResults.push(outputText(part.output));
    }
  }
  return { input, system: system.join('\n'), toolResults, tools: (options.tools ?? []).map((t) => t.name) };
}

/** The finish reason and (zero) usage in the shape of the specification version in use. */
function ending(reason: 'tool-calls' | 'stop') {
  if (SPECIFICATION === 'v2') {
    return { finishReason: reason, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } };
  }
  return {
    finishReason: { unified: reason, raw: reason === 'tool-calls' ? 'tool_calls' : 'stop' },
    usage: {
      inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 0, text: 0, reasoning: 0 },
    },
  };
}

/**
 * A scripted AI SDK language model: no network, no randomness. It implements the provider
 * specification the installed `ai` expects (v2 for ai 5, v3 for ai 6 and 7), answers
 * `generateText` calls, and turns each prompt into a {@link ScriptView} answered with the script's
 * step as a `tool-call` or `text` part.
 */
export function scriptedLanguageModel(script: ModelScript): LanguageModel {
  let calls = 0;
  const model = {
    specificationVersion: SPECIFICATION,
    provider: 'countersign',
    modelId: 'scripted',
    supportedUrls: {},
    doGenerate: async (options: CallOptions) => {
      calls += 1;
      const step = script(viewOf(options));
      const content: Content[] =
        'toolCall' in step
          ? [
              {
                type: 'tool-call',
                toolCallId: `call_${calls}`,
                toolName: step.toolCall.name,
                input: JSON.stringify(step.toolCall.arguments),
              },
            ]
          : [{ type: 'text', text: step.text }];
      return { content, ...ending('toolCall' in step ? 'tool-calls' : 'stop'), warnings: [] };
    },
    doStream: async () => {
      throw new Error('the scripted model answers generateText only');
    },
  };
  // Which specification the SDK expects is known only at run time, so the compiler cannot check it.
  return model as unknown as LanguageModel;
}
