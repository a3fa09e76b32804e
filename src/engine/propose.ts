import { ConfigurationError } from '../canonical/errors.js';
import type { EngineContext } from './engine-context.js';
import { inTransaction } from './audit-step.js';
import { type FreezeFacts, freezeProposal, type InvalidRequest, invalidRequest } from './freeze-proposal.js';
import { toProposal } from './proposal.js';
import { routeNewProposal, routeOf } from './routing.js';
import type { OperationKind, Operations, OutcomeOf, ProposalOf, RequestOf } from './operation-types.js';
import { execute, type ExecuteOptions } from './execute.js';
import { applyGrants, coveringGrants, type GrantDecision } from './grants.js';
import { runIdProblem } from './run-id.js';
import { isStorableText, UnstorableValueError } from '../store/unstorable-value.js';
import type { ProposalRecord } from '../store/records.js';
import type { RateLimited } from './proposal-quota.js';
import { type CorruptAuditChain, corruptAuditChain } from './corrupt-audit-chain.js';
import { CorruptAuditChainError } from '../store/store-errors.js';

/**
 * What an agent (through the application) proposes. Tenant, section and requester come from the
 * server. On a typed engine, `operation` is one of its registered kinds and `request` that kind's
 * request type; on an untyped one (the default), any string and any value.
 */
export interface ProposeInput<
  Ops extends Operations = Operations,
  K extends OperationKind<Ops> = OperationKind<Ops>,
> {
  /** The operation kind, e.g. `invoice.pay`. */
  readonly operation: K;
  /** What the model sent: untrusted, parsed strictly by the operation's request schema. */
  readonly request: RequestOf<Ops, K>;
  readonly tenant: string;
  readonly section?: string | null;
  /**
   * The resource the caller expects the proposal to act on. For an operation that names its own
   * resource (`resource` in `defineOperation`) it is optional and must agree with the derived one
   * (equal, or a `prefix*` boundary), else `resource_mismatch`; otherwise it is required and stored.
   */
  readonly resource?: string | undefined;
  /** The proposing principal (an agent). It can never approve its own proposal. */
  readonly requestedBy: string;
  /**
   * The agent run this proposal belongs to. Missing, blank, or the text `"undefined"`/`"null"`
   * (a missing value turned into a string) → `run_id_missing` (fail closed).
   */
  readonly runId: string | null | undefined;
}

/**
 * `proposed` with the frozen proposal (and, when one of the agent's grants covers the operation,
 * what the grant decided); an invalid request with text the model can act on; `rate_limited`
 * when the agent or its tenant is over a proposal quota (the engine's `limits`); or
 * `corrupt_audit_chain` when the tenant's audit chain cannot take the proposal (nothing stored).
 */
export type ProposeResult<
  Ops extends Operations = Operations,
  K extends OperationKind<Ops> = OperationKind<Ops>,
> =
  | (K extends OperationKind<Ops>
      ? {
          readonly kind: 'proposed';
          readonly proposal: ProposalOf<Ops, K>;
          readonly grant?: GrantDecision<OutcomeOf<Ops, K>>;
        }
      : never)
  | InvalidRequest
  | RateLimited
  | CorruptAuditChain;

const UNSTORABLE_TEXT =
  'holds a NUL character (U+0000) or a lone surrogate, which cannot be stored exactly; remove it';

function requireText(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ConfigurationError(`propose: ${name} must be a non-empty string from the server`);
  return value;
}

/**
 * Turns a model's request into a frozen, durable, pending proposal. When a live grant of the
 * proposing agent covers it, the grant approves it (audited `approved_by_grant`) and it executes
 * through the same claim as a human approval.
 */
export async function propose(
  ctx: EngineContext,
  input: ProposeInput,
  executeOptions: ExecuteOptions = {},
): Promise<ProposeResult> {
  const tenant = requireText('tenant', input.tenant);
  const requestedBy = requireText('requestedBy', input.requestedBy);
  const runIdRefused = runIdProblem(input.runId);
  if (typeof input.runId !== 'string' || runIdRefused !== undefined) {
    return invalidRequest(
      [
        {
          path: '$.runId',
          message:
            runIdRefused === 'placeholder'
              ? 'the run id is the text "undefined" or "null": a missing run id was turned into a string'
              : 'a run id is required; proposals are never matched to "the latest" run',
        },
      ],
      'run_id_missing',
    );
  }
  const operation = ctx.operations.get(input.operation);
  if (!operation) {
    return invalidRequest([
      {
        path: '$.operation',
        message: `unknown operation "${input.operation}" (known: ${[...ctx.operations.keys()].join(', ')})`,
      },
    ]);
  }
  if (input.resource === undefined && !operation.resourceOf) {
    return invalidRequest([
      {
        path: '$.resource',
        message: `${operation.kind} does not name its own resource: the proposal needs one`,
      },
    ]);
  }
  const resource = input.resource === undefined ? null : requireText('resource', input.resource);
  // Labels go into the contract's canonical text and into columns as they are: one that neither
  // holds exactly is named here, before either sees it.
  const labels = [
    ['$.section', input.section],
    ['$.resource', resource],
    ['$.runId', input.runId],
  ] as const;
  for (const [path, value] of labels) {
    if (typeof value === 'string' && !isStorableText(value))
      return invalidRequest([{ path, message: UNSTORABLE_TEXT }]);
  }
  const facts: FreezeFacts = {
    tenant,
    section: input.section ?? null,
    resource,
    requestedBy,
    runId: input.runId,
    operation: operation.kind,
  };
  const frozen = await freezeProposal(ctx, operation, input.request, {
    facts,
    links: { supersedes: null, editedBy: null },
  });
  if (frozen.kind !== 'frozen') return frozen;
  const { record } = frozen;
  // Looked for before the write transaction, which then reads no grant when none covers the
  // operation (most proposals). A grant made between this read and the insert is as if made just
  // after it; when one covers it, the transaction reads them again and spends by compare-and-set.
  const granted = (await ctx.store.read((tx) => coveringGrants(tx, record))).length > 0;
  const written = await writeProposal(ctx, record, granted);
  if (written.kind !== 'written') return written;
  const { grant } = written;
  const route = written.routed ? await ctx.store.read((tx) => routeOf(tx, tenant, record.id)) : null;
  if (grant === undefined) return { kind: 'proposed', proposal: toProposal(record, undefined, [], route) };
  if (grant.kind === 'refused')
    return { kind: 'proposed', proposal: toProposal(record, undefined, [], route), grant };
  const outcome = await execute(ctx, grant.contract, executeOptions);
  const stored = await ctx.store.read((tx) => tx.getProposal(tenant, record.id));
  return {
    kind: 'proposed',
    proposal: toProposal(stored ?? record, undefined, [], route),
    grant: { kind: 'approved_by_grant', grantId: grant.grantId, outcome },
  };
}

/**
 * Stores a frozen proposal with its `proposed` event and, when a grant may cover it, applies the
 * grant, in one transaction. A value the store cannot hold exactly (PostgreSQL text refuses
 * U+0000: a NUL the model put in a field the operation turns into a column, such as its resource)
 * writes nothing and is the request's to fix: `invalid_request`, on every surface alike. A tenant
 * whose audit chain cannot take the `proposed` event writes nothing either: `corrupt_audit_chain`.
 */
async function writeProposal(
  ctx: EngineContext,
  record: ProposalRecord,
  granted: boolean,
): Promise<
  | InvalidRequest
  | CorruptAuditChain
  | {
      readonly kind: 'written';
      readonly grant: Awaited<ReturnType<typeof applyGrants>>;
      readonly routed: boolean;
    }
> {
  try {
    const { grant, routed } = await inTransaction(ctx, async (t) => {
      await t.tx.insertProposal(record);
      // Routed before its `proposed` event, whose notification goes to the routed group.
      const route = await routeNewProposal(t.tx, record);
      await t.record({
        tenant: record.tenant,
        proposalId: record.id,
        operation: record.operation,
        proposedAt: record.createdAt,
        runId: record.runId,
        step: 'proposed',
        actor: record.requestedBy,
        digests: { proposed: record.digest },
        detail: {
          operation: record.operation,
          scopeVersion: record.scopeVersion,
          viewVersion: record.viewVersion,
          scopeDigest: record.scopeDigest,
          ...(route ? { route: route.routeName, group: route.group } : {}),
        },
      });
      return {
        grant: granted ? await applyGrants(ctx, t, record, route) : undefined,
        routed: route !== undefined,
      };
    });
    return { kind: 'written', grant, routed };
  } catch (error) {
    if (error instanceof CorruptAuditChainError) return corruptAuditChain(ctx, error);
    if (!(error instanceof UnstorableValueError)) throw error;
    return invalidRequest([{ path: '$', message: `a text ${UNSTORABLE_TEXT}` }]);
  }
}
