import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import type { RunnableConfig } from '@langchain/core/runnables';
import { ToolMessage } from '@langchain/core/messages';
import { StructuredTool, type ToolReturnType, type ToolRunnableConfig } from '@langchain/core/tools';
import {
  BINDING_ERROR_MODEL_TEXT,
  BindingError,
  type BindingErrorReason,
  type BindingField,
} from '../shared/agent-binding.js';
import type { OperationTool } from '../shared/operation-tools.js';
import type { JsonObjectSchema } from '../shared/request-json-schema.js';
import type { ToolReply } from '../shared/tool-reply.js';
import { isToolCall } from './tool-call.js';

/** The artifact a proposing tool attaches to its `ToolMessage`, for routing and for the application's UI. */
export type ProposalArtifact =
  | {
      readonly countersign: 'proposed';
      readonly proposalId: string;
      readonly short: string;
      readonly operation: string;
    }
  | { readonly countersign: 'invalid_request'; readonly reason: string; readonly operation: string }
  | {
      readonly countersign: 'rate_limited';
      readonly reason: 'rate_limited';
      readonly retryAfterMs: number;
      readonly operation: string;
    }
  | {
      readonly countersign: 'corrupt_audit_chain';
      readonly reason: 'corrupt_audit_chain';
      readonly operation: string;
    }
  | {
      /** The application's binding was unusable: {@link proposalMade} throws it as a `BindingError`. */
      readonly countersign: 'binding_error';
      readonly field: BindingField;
      readonly reason: BindingErrorReason;
      readonly operation: string;
    };

/**
 * One operation as a LangChain structured tool. Its `schema` is the operation's request as JSON
 * Schema (what `bindTools` shows the model); calling it proposes and returns a `ToolMessage`
 * whose content is the safe reply and whose `artifact` says what happened. A request the
 * operation refuses is answered with the operation's own `modelMessage` (status `error`) before
 * LangChain's generic schema check can replace it with a less useful one. An unusable binding
 * (after `onBindingError`) is answered with a `binding_error` artifact and a text that asks the
 * model for nothing, and {@link proposalMade} throws it; invoked without a tool call, it throws.
 */
export class ProposalTool extends StructuredTool<JsonObjectSchema, unknown, unknown, ToolMessage | string> {
  name: string;
  description: string;
  schema: JsonObjectSchema;
  readonly operation: string;
  readonly #tool: OperationTool<RunnableConfig>;

  constructor(tool: OperationTool<RunnableConfig>) {
    super();
    this.#tool = tool;
    this.name = tool.name;
    this.description = tool.description;
    this.schema = tool.parameters;
    this.operation = tool.operation;
  }

  override async invoke<TInput, TConfig extends ToolRunnableConfig | undefined>(
    input: TInput,
    config?: TConfig,
  ): Promise<ToolReturnType<TInput, TConfig, ToolMessage | string>> {
    const args = isToolCall(input) ? input.args : input;
    if (this.#tool.accepts(args)) return super.invoke(input, config);
    // Refused before LangChain's own JSON Schema check, which would answer with a generic message.
    const id = isToolCall(input) ? input.id : config?.toolCall?.id;
    const out = await this.#propose(args, config ?? {}, id);
    return out as ToolReturnType<TInput, TConfig, ToolMessage | string>;
  }

  protected async _call(
    arg: unknown,
    _runManager?: CallbackManagerForToolRun,
    config?: ToolRunnableConfig,
  ): Promise<ToolMessage | string> {
    return this.#propose(arg, config ?? {}, config?.toolCall?.id);
  }

  async #propose(
    args: unknown,
    config: RunnableConfig,
    id: string | undefined,
  ): Promise<ToolMessage | string> {
    let reply: ToolReply;
    try {
      reply = await this.#tool.propose(args, config);
    } catch (error) {
      // A ToolNode would turn a thrown error into "please fix your mistakes" for the model: answer
      // without a retry prompt, and let proposalMade() end the invocation with the error.
      if (!(error instanceof BindingError) || id === undefined) throw error;
      return new ToolMessage({
        content: BINDING_ERROR_MODEL_TEXT,
        tool_call_id: id,
        name: this.name,
        status: 'error',
        artifact: {
          countersign: 'binding_error',
          field: error.field,
          reason: error.reason,
          operation: this.operation,
        } satisfies ProposalArtifact,
      });
    }
    return id === undefined ? reply.text : this.#message(reply, id);
  }

  #message(reply: ToolReply, toolCallId: string): ToolMessage {
    return new ToolMessage({
      content: reply.text,
      tool_call_id: toolCallId,
      name: this.name,
      status: reply.kind === 'proposed' ? 'success' : 'error',
      artifact: this.#artifact(reply),
    });
  }

  #artifact(reply: ToolReply): ProposalArtifact {
    switch (reply.kind) {
      case 'proposed':
        return {
          countersign: 'proposed',
          proposalId: reply.proposal.id,
          short: reply.proposal.short,
          operation: this.operation,
        };
      case 'invalid_request':
        return { countersign: 'invalid_request', reason: reply.reason, operation: this.operation };
      case 'rate_limited':
        return {
          countersign: 'rate_limited',
          reason: 'rate_limited',
          retryAfterMs: reply.retryAfterMs,
          operation: this.operation,
        };
      case 'corrupt_audit_chain':
        return { countersign: 'corrupt_audit_chain', reason: reply.reason, operation: this.operation };
    }
  }
}
