import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import { ToolMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { StructuredTool, type ToolReturnType, type ToolRunnableConfig } from '@langchain/core/tools';
import type { ReadReply, ReadToolHandle } from '../shared/read-tools.js';
import type { JsonObjectSchema } from '../shared/request-json-schema.js';
import { isToolCall } from './tool-call.js';

/** The artifact a read tool attaches to its `ToolMessage`: what happened, never the rows again. */
export type ReadArtifact =
  | { readonly countersign: 'read'; readonly tool: string; readonly readId: string }
  | { readonly countersign: 'invalid_request'; readonly reason: string; readonly tool: string }
  | {
      readonly countersign: 'corrupt_audit_chain';
      readonly reason: 'corrupt_audit_chain';
      readonly tool: string;
    }
  | { readonly countersign: 'rate_limited'; readonly reason: 'rate_limited'; readonly tool: string };

/**
 * One read tool as a LangChain structured tool. Its `schema` is the tool's input as JSON Schema;
 * calling it reads for the binding (from `config.configurable` when the binding is a function) and
 * returns a `ToolMessage` with the result as JSON. Input the strict schema refuses is answered with
 * countersign's own refusal (status `error`) before LangChain's generic schema check.
 */
export class ReadTool extends StructuredTool<JsonObjectSchema, unknown, unknown, ToolMessage | string> {
  name: string;
  description: string;
  schema: JsonObjectSchema;
  readonly #handle: ReadToolHandle<RunnableConfig>;

  constructor(handle: ReadToolHandle<RunnableConfig>) {
    super();
    this.#handle = handle;
    this.name = handle.name;
    this.description = handle.description;
    this.schema = handle.parameters;
  }

  override async invoke<TInput, TConfig extends ToolRunnableConfig | undefined>(
    input: TInput,
    config?: TConfig,
  ): Promise<ToolReturnType<TInput, TConfig, ToolMessage | string>> {
    const args = isToolCall(input) ? input.args : input;
    if (this.#handle.accepts(args)) return super.invoke(input, config);
    const reply = await this.#handle.read(args, config ?? {});
    const id = isToolCall(input) ? input.id : config?.toolCall?.id;
    const out: ToolMessage | string = id === undefined ? reply.text : this.#message(reply, id);
    return out as ToolReturnType<TInput, TConfig, ToolMessage | string>;
  }

  protected async _call(
    arg: unknown,
    _runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<ToolMessage | string> {
    const reply = await this.#handle.read(arg, config ?? {});
    const id = config?.toolCall?.id;
    return id === undefined ? reply.text : this.#message(reply, id);
  }

  #message(reply: ReadReply, toolCallId: string): ToolMessage {
    const artifact: ReadArtifact =
      reply.kind === 'read'
        ? { countersign: 'read', tool: this.name, readId: reply.readId }
        : reply.kind === 'corrupt_audit_chain'
          ? { countersign: 'corrupt_audit_chain', reason: reply.reason, tool: this.name }
          : reply.kind === 'rate_limited'
            ? { countersign: 'rate_limited', reason: reply.reason, tool: this.name }
            : { countersign: 'invalid_request', reason: reply.reason, tool: this.name };
    return new ToolMessage({
      content: reply.text,
      tool_call_id: toolCallId,
      name: this.name,
      status: reply.kind === 'read' ? 'success' : 'error',
      artifact,
    });
  }
}
