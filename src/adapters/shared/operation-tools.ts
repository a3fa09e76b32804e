import { ConfigurationError } from '../../canonical/errors.js';
import type { Engine } from '../../engine/create-engine.js';
import type { AnyOperation } from '../../operation/define-operation.js';
import {
  type AgentBinding,
  type BindingErrorHook,
  type BindingSource,
  checkBinding,
  resolveBinding,
} from './agent-binding.js';
import { type JsonObjectSchema, requestJsonSchema } from './request-json-schema.js';
import { type ToolReply, toToolReply } from './tool-reply.js';
import { toolNameOf } from './tool-name.js';

/**
 * One operation as a framework-neutral tool: the name and description the model sees, the
 * operation's request schema as JSON Schema, and `propose`, which turns the model's arguments into
 * a pending proposal bound to the application's tenant, resource, run and agent.
 */
export interface OperationTool<Context = undefined> {
  /** `propose_<kind>` with dots as underscores. */
  readonly name: string;
  /** The operation kind, e.g. `invoice.pay`. */
  readonly operation: string;
  readonly description: string;
  readonly parameters: JsonObjectSchema;
  /** True when the request parses through the operation's strict request schema (a cheap pre-check; `propose` decides). */
  accepts(request: unknown): boolean;
  /**
   * Proposes; never executes. Validation failures come back as `invalid_request` with the
   * operation's model message. `context` is the framework's per-run context, for a binding
   * function; ignored for a fixed binding. An unusable binding throws `BindingError` (after
   * `onBindingError`), before anything is stored.
   */
  propose(request: unknown, context: Context): Promise<ToolReply>;
}

/** Options shared by every adapter's tool builder (`Kind`: a typed engine's registered kinds). */
export interface OperationToolOptions<Kind extends string = string> {
  /** Only these operation kinds become tools (default: every registered operation that can be proposed). */
  readonly operations?: readonly Kind[];
  /** Replaces the default description of an operation's tool, by operation kind. */
  readonly descriptions?: Readonly<Partial<Record<Kind, string>>>;
  /**
   * Called with the `BindingError` of a tool call whose binding function threw or returned an
   * unusable binding (no run id, no tenant, no agent, the text "undefined"…), before the run ends
   * with that error. The model is never asked to fix it. A fixed binding is checked when the
   * tools are built, and its error is thrown there.
   */
  readonly onBindingError?: BindingErrorHook;
}

function defaultDescription(operation: AnyOperation): string {
  const own = operation.request?.description;
  const what = own ? `${own.replace(/\.?\s*$/, '')}. ` : '';
  return (
    `${what}Proposes ${operation.kind} for human approval: nothing happens until a human approves the exact ` +
    'proposal, then the application (not you) executes it. Returns the proposal id and its short hash.'
  );
}

/**
 * Builds the framework-neutral tools of an engine's operations. With a fixed binding, every
 * proposal carries its facts and a missing fact fails here, at build time; with a binding
 * function, the facts are read (and checked) at each call from the framework's per-run context.
 */
export function operationTools<Context = undefined>(
  engine: Engine,
  source: BindingSource<Context>,
  options: OperationToolOptions = {},
): OperationTool<Context>[] {
  const fixed = typeof source === 'function' ? undefined : checkBinding(source);
  const bindingFor = (context: Context): AgentBinding =>
    fixed ?? resolveBinding(source as (c: Context) => AgentBinding, context, options.onBindingError);
  const wanted =
    options.operations ??
    [...engine.operations.values()].filter((op) => op.request && op.prepare).map((op) => op.kind);
  return wanted.map((kind) => {
    const operation = engine.operations.get(kind);
    if (!operation)
      throw new ConfigurationError(`proposal tools: operation "${kind}" is not registered with the engine`);
    return Object.freeze({
      name: toolNameOf(kind),
      operation: kind,
      description: options.descriptions?.[kind] ?? defaultDescription(operation),
      parameters: requestJsonSchema(operation),
      accepts: (request: unknown) => operation.request?.safeParse(request).success === true,
      propose: async (request: unknown, context: Context) => {
        const binding = bindingFor(context);
        return toToolReply(
          await engine.proposals.propose({
            operation: kind,
            request,
            tenant: binding.tenant,
            section: binding.section ?? null,
            ...(binding.resource !== undefined ? { resource: binding.resource } : {}),
            requestedBy: binding.agent,
            runId: binding.runId,
          }),
        );
      },
    });
  });
}
