import { ConfigurationError } from '../../canonical/errors.js';
import { isPlaceholder } from '../../engine/run-id.js';

/**
 * Who proposes, for whom, and in which run — chosen by the application when it builds the tools,
 * never by the model. Every proposal a tool makes carries exactly these facts.
 */
export interface AgentBinding {
  /** The tenant the agent works for (from the server's session or token). */
  readonly tenant: string;
  /**
   * The resource boundary the assistant is confined to, e.g. `invoice:inv-104` or `invoice:*`.
   * Optional for operations that name their own resource (a proposal outside the boundary is
   * `resource_mismatch`); required, and stored as is, for operations that do not.
   */
  readonly resource?: string;
  /** The agent run these proposals belong to: generate one per run (`newId('run')`). */
  readonly runId: string;
  /** The proposing agent principal, e.g. `agent:acme-assistant`. It can never approve its own proposals. */
  readonly agent: string;
  readonly section?: string | null;
}

/**
 * A binding fixed when the tools are built, or read at each call from the framework's own per-run
 * context (OpenAI Agents' `RunContext.context`, LangGraph's `config.configurable`) — which the
 * application fills and the model never sees — so the tools can be built once at startup.
 */
export type BindingSource<Context> = AgentBinding | ((context: Context) => AgentBinding);

/** Which fact of a binding is wrong: one of its fields, or the binding as a whole. */
export type BindingField = 'tenant' | 'resource' | 'runId' | 'agent' | 'binding';

/**
 * Why a binding is unusable:
 * - `missing`: the field is not a non-empty string (absent, `undefined`, blank, another type);
 * - `placeholder`: the field is the text `"undefined"` or `"null"` — a missing value that went
 *   through `String(…)` or a template, which must not become a run (or tenant) of that name;
 * - `not_an_object`: the binding function returned something that is not a binding;
 * - `threw`: the binding function threw (the error is the `cause`).
 */
export type BindingErrorReason = 'missing' | 'placeholder' | 'not_an_object' | 'threw';

/**
 * The application's binding (tenant, run id, agent, resource) is unusable. This is the
 * application's mistake, never the model's: adapters hand it to `onBindingError` and end the run
 * with it, and the model is never asked to fix or retry anything. No proposal was stored.
 */
export class BindingError extends ConfigurationError {
  readonly field: BindingField;
  readonly reason: BindingErrorReason;

  constructor(field: BindingField, reason: BindingErrorReason, options?: ErrorOptions) {
    super(
      `agent binding: ${field} ${DESCRIPTIONS[reason]}; fix the application, not the model's request`,
      options,
    );
    this.field = field;
    this.reason = reason;
  }
}

const DESCRIPTIONS: Record<BindingErrorReason, string> = {
  missing: 'must be a non-empty string chosen by the application',
  placeholder: 'is the text "undefined" or "null": a missing value was turned into a string',
  not_an_object: 'must be an object with tenant, runId and agent',
  threw: 'could not be read: the binding function threw',
};

/** Called with every {@link BindingError} a tool call meets, before the run ends with it. */
export type BindingErrorHook = (error: BindingError) => void;

/**
 * What the model may read when a framework turns a thrown tool error into a message: nothing about
 * its request is wrong and there is nothing for it to retry.
 */
export const BINDING_ERROR_MODEL_TEXT =
  'The application could not submit this proposal because of its own configuration; nothing was proposed. ' +
  'This is not a problem with your request: do not retry; tell the user it could not be submitted.';

/** Checks a binding (when the tools are built, or at each call for a binding function). Throws {@link BindingError}. */
export function checkBinding(binding: AgentBinding): AgentBinding {
  if (typeof binding !== 'object' || binding === null) throw new BindingError('binding', 'not_an_object');
  for (const key of ['tenant', 'resource', 'runId', 'agent'] as const) {
    const value: unknown = binding[key];
    if (key === 'resource' && value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '') throw new BindingError(key, 'missing');
    if (isPlaceholder(value)) throw new BindingError(key, 'placeholder');
  }
  return Object.freeze({ ...binding });
}

/**
 * Reads a binding source for one call: a fixed binding as is, a function's result checked. Any
 * failure is a {@link BindingError}, handed to `onBindingError` first.
 */
export function resolveBinding<Context>(
  source: (context: Context) => AgentBinding,
  context: Context,
  onBindingError?: BindingErrorHook,
): AgentBinding {
  try {
    let made: AgentBinding;
    try {
      made = source(context);
    } catch (cause) {
      throw new BindingError('binding', 'threw', { cause });
    }
    return checkBinding(made);
  } catch (error) {
    if (error instanceof BindingError) onBindingError?.(error);
    throw error;
  }
}

/**
 * The {@link BindingError} behind a rejected run, when there is one: the error itself, or one it
 * wraps (`cause`, or the `error` field of a framework's tool-call error such as the Agents SDK's
 * `ToolCallError`).
 *
 * @example
 * try { await run(agent, input, { context }); }
 * catch (error) { const binding = bindingErrorOf(error); if (binding) logger.error(binding.field, binding.reason); else throw error; }
 */
export function bindingErrorOf(error: unknown): BindingError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    if (current instanceof BindingError) return current;
    const wrapped = current as { readonly error?: unknown; readonly cause?: unknown };
    current = wrapped.error instanceof Error ? wrapped.error : wrapped.cause;
  }
  return undefined;
}
