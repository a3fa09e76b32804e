import { ConfigurationError } from '../../canonical/errors.js';

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

/** Checks a binding once, when the tools are built, so a missing fact fails at startup and not mid-run. */
export function checkBinding(binding: AgentBinding): AgentBinding {
  for (const key of ['tenant', 'resource', 'runId', 'agent'] as const) {
    const value: unknown = binding[key];
    if (key === 'resource' && value === undefined) continue;
    if (typeof value !== 'string' || value.trim() === '') {
      throw new ConfigurationError(
        `agent binding: ${key} must be a non-empty string chosen by the application`,
      );
    }
  }
  return Object.freeze({ ...binding });
}
