import type { InputIssue } from '../../operation/issues.js';

/** The params of a `tools/call` request: a tool to call with its arguments, or what is wrong with them. */
export type ToolCallParams =
  | {
      readonly kind: 'call';
      readonly name: string;
      readonly arguments: Record<string, unknown> | undefined;
    }
  | { readonly kind: 'invalid'; readonly issues: readonly InputIssue[] };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// Worded like zod's own issues, which the other invalid_request refusals quote.
const received = (value: unknown) =>
  `Invalid input: expected object, received ${value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value}`;

/**
 * Reads the params of a `tools/call` as the SDK's request schema would (a string `name`, optional
 * object `arguments`), but answers a malformed call with path-named issues countersign refuses as
 * `invalid_request`: `$` is the arguments, as in every other issue of a tool call, and
 * `params.name` the tool's name. `_meta` is left to the SDK.
 */
export function toolCallParams(params: unknown): ToolCallParams {
  if (!isObject(params)) return { kind: 'invalid', issues: [{ path: 'params', message: received(params) }] };
  const issues: InputIssue[] = [];
  const { name, arguments: args } = params;
  if (typeof name !== 'string' || name === '')
    issues.push({ path: 'params.name', message: 'the name of the tool to call is required' });
  if (args !== undefined && !isObject(args)) issues.push({ path: '$', message: received(args) });
  if (issues.length > 0 || typeof name !== 'string') return { kind: 'invalid', issues };
  return { kind: 'call', name, arguments: args as Record<string, unknown> | undefined };
}
