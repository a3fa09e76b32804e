import { canonicalize } from '../canonical/canonicalize.js';
import { ConfigurationError } from '../canonical/errors.js';
import { sha256Hex } from '../canonical/digest.js';
import type { AnyReadTool, ReadScope } from '../operation/define-read-tool.js';
import { toInputIssues } from '../operation/issues.js';
import { overBudget } from './audit-budget.js';
import { inTransaction } from './audit-step.js';
import type { RateLimited } from './proposal-quota.js';
import { type CorruptAuditChain, refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';
import { type InvalidRequest, invalidRequest } from './freeze-proposal.js';
import { newId } from './ids.js';

/** Who reads, for whom, in which run: from the server's token or the application's binding. */
export interface ReadBinding {
  readonly tenant: string;
  readonly section?: string | null;
  /** The reading agent principal, e.g. `agent:acme-assistant`. */
  readonly agent: string;
  /** The agent run. Missing → `run_id_missing` (fail closed), as for proposals. */
  readonly runId: string | null | undefined;
}

/**
 * `read` with the tool's result and the id of its audit event, the refusal the model can act on, or
 * `corrupt_audit_chain` when the tenant's audit chain cannot record the read (its result withheld).
 */
export type ReadResult<Result = unknown> =
  | { readonly kind: 'read'; readonly tool: string; readonly result: Result; readonly readId: string }
  | InvalidRequest
  | RateLimited
  | CorruptAuditChain;

function requireText(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new ConfigurationError(`read: ${name} must be a non-empty string from the server`);
  return value;
}

// The texts a careless binding produces from a missing run id (String(undefined)) are no run id.
const NOT_A_RUN_ID = new Set(['undefined', 'null']);

/**
 * Runs one read tool for the server-owned scope: refuses a missing run id (`run_id_missing`), an
 * unknown tool or input its strict schema refuses (`invalid_request`, every field named); runs
 * `read` with the binding's tenant, section, agent and run; appends a `read` event to the tenant's
 * audit chain (tool, agent, run, the digest of the parsed input — never the rows); and only then
 * returns the result. An audit that cannot be written fails the read; one whose tenant's chain holds an
 * event the engine did not write is refused, its result withheld: `corrupt_audit_chain`.
 */
export async function read(
  ctx: EngineContext,
  tools: ReadonlyMap<string, AnyReadTool>,
  call: { readonly name: string; readonly input: unknown },
  binding: ReadBinding,
): Promise<ReadResult> {
  const { name, input } = call;
  const tenant = requireText('tenant', binding.tenant);
  const agent = requireText('agent', binding.agent);
  const runId = binding.runId;
  if (typeof runId !== 'string' || runId.trim() === '' || NOT_A_RUN_ID.has(runId.trim())) {
    return invalidRequest(
      [{ path: '$.runId', message: 'a run id is required; reads are never matched to "the latest" run' }],
      'run_id_missing',
    );
  }
  const tool = tools.get(name);
  if (!tool) {
    return invalidRequest([
      { path: '$.tool', message: `unknown read tool "${name}" (known: ${[...tools.keys()].join(', ')})` },
    ]);
  }
  const parsed = tool.input.safeParse(input);
  if (!parsed.success) return invalidRequest(toInputIssues(parsed.error));
  // Before the tool runs: every read is audited, so an agent's flood stops here, unwritten.
  const over = overBudget(ctx.auditBudget, 'read', { tenant, principal: agent }, ctx.clock.now());
  if (over) {
    ctx.logger.warn({ tenant, agent, runId, tool: tool.name, reason: over.reason }, 'read rate_limited');
    return {
      kind: 'rate_limited',
      reason: 'rate_limited',
      limit: 'agent_reads',
      retryAfterMs: over.retryAfterMs,
      modelMessage: `Too many reads: ${over.message}. Do not call read tools again until then.`,
    };
  }
  let inputDigest: string;
  try {
    inputDigest = sha256Hex(canonicalize(parsed.data));
  } catch (error) {
    return invalidRequest([{ path: '$', message: error instanceof Error ? error.message : String(error) }]);
  }
  const section = binding.section ?? null;
  const scope: ReadScope = Object.freeze({ tenant, section, actor: agent, runId });
  const result = await tool.read(parsed.data, scope);
  const readId = newId('read');
  const refused = await refusingCorruptChain(
    ctx,
    async () => {
      await inTransaction(ctx, (t) =>
        t.record({
          tenant,
          proposalId: readId,
          runId,
          step: 'read',
          actor: agent,
          detail: {
            tool: tool.name,
            input: inputDigest,
            ...(section !== null ? { section } : {}),
          },
        }),
      );
      return undefined;
    },
    (refusal) => refusal,
  );
  if (refused) return refused;
  return { kind: 'read', tool: tool.name, result, readId };
}
