/** What LangChain passes a tool invoked from a model's tool call (rather than with plain input). */
export interface ToolCallLike {
  readonly type?: string;
  readonly id?: string;
  readonly name?: string;
  readonly args: unknown;
}

/** Whether a tool was invoked with a model's tool call, whose `id` its `ToolMessage` must answer. */
export function isToolCall(input: unknown): input is ToolCallLike {
  return (
    typeof input === 'object' &&
    input !== null &&
    (input as { type?: unknown }).type === 'tool_call' &&
    'args' in input
  );
}
