import { canonicalize } from '../canonical/canonicalize.js';
import { seal, verifySeal } from '../canonical/seal.js';
import { parseStoredJson } from '../canonical/stored-json.js';
import { evaluateGrant, type Grant, type GrantFit, grantIssues, toGrant } from '../grants/grant.js';
import type { Actor } from '../operation/actor.js';
import type { InputIssue } from '../operation/issues.js';
import type { Outcome } from '../operation/outcome.js';
import type { GrantRecord, ProposalRecord, ProposalRouteRecord } from '../store/records.js';
import type { GrantHistory, GrantStateSeal, StoreReader } from '../store/store.js';
import { claim } from './claim.js';
import type { ExecutionContract } from './execution-contract.js';
import type { StepTransaction } from './audit-step.js';
import { inTransaction } from './audit-step.js';
import { type CorruptAuditChain, refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';
import { newId } from './ids.js';
import { policyOf } from './proposal.js';

/** An admin delegates a policy: this agent's proposals within these bounds run without a click. */
/**
 * The constraint a scope field of type `V` can take: numbers an exact value, a list or a range;
 * arrays (sets) an exact value or a subset of allowed members; anything else an exact value or a
 * list.
 */
export type ConstraintOn<V> = [NonNullable<V>] extends [number]
  ?
      | { readonly equals: V }
      | { readonly oneOf: readonly V[] }
      | { readonly min?: number; readonly max?: number }
  : [NonNullable<V>] extends [readonly (infer M)[]]
    ? { readonly equals: V } | { readonly subsetOf: readonly M[] }
    : { readonly equals: V } | { readonly oneOf: readonly V[] };

/** The numeric fields of a scope: what a cumulative cap may add up. */
export type NumericField<Scope> = {
  [F in keyof Scope & string]-?: [NonNullable<Scope[F]>] extends [number] ? F : never;
}[keyof Scope & string];

/**
 * What {@link TypedEngine.grant} takes in an engine created with literal operation kinds:
 * `operations` names only registered kinds, `constraints` only fields every named operation's scope
 * has, each with a constraint its type allows, and `cap.field` only a numeric one, so a misspelt
 * kind or field does not compile. The engine still checks every grant at run time
 * (`invalid_grant`), which is what input from the API and the console meets.
 *
 * @example
 * await engine.grants.create({
 *   tenant: 'acme', grantedBy: admin, subject: 'agent:acme-assistant', operations: ['refund.create'],
 *   resource: 'order:*', constraints: { amount_minor: { max: 10_000 }, currency: { equals: 'USD' } },
 *   expiresAt: Date.now() + 7 * 24 * 3_600_000,
 * });
 */
export interface TypedGrantInput<Kind extends string, Scope>
  extends Omit<GrantInput, 'operations' | 'constraints' | 'cap'> {
  readonly operations: readonly Kind[];
  /** Constraints by scope field: `{ amount_minor: { max: 10_000 }, currency: { equals: 'USD' } }`. */
  readonly constraints: { readonly [F in keyof Scope & string]?: ConstraintOn<Scope[F]> };
  /** A cumulative limit over a numeric scope field and/or a count of uses. */
  readonly cap?: { readonly field?: NumericField<Scope>; readonly total?: number; readonly uses?: number };
}

/** What `grant` takes: the fields of a grant, checked by the engine (`invalid_grant`). */
export interface GrantInput {
  readonly tenant: string;
  /** Must hold the `admin` role in the tenant. */
  readonly grantedBy: Actor;
  /** The agent principal whose proposals the grant approves, e.g. `agent:acme-assistant`. */
  readonly subject: string;
  readonly operations: readonly string[];
  /** The exact resource (`order:ord-81`) or a prefix ending in `*` (`order:*`). */
  readonly resource: string;
  /** Typed constraints by scope field: `{ amount_minor: { max: 10_000 }, currency: { equals: 'USD' } }`. */
  readonly constraints: Readonly<Record<string, unknown>>;
  /** A cumulative limit over a numeric scope field and/or a count of uses. */
  readonly cap?: { readonly field?: string; readonly total?: number; readonly uses?: number };
  readonly expiresAt: Date | number;
  readonly note?: string;
  /**
   * Withdrawn: a grant never approves a proposal whose policy needs more than one approval, since
   * one admin would then stand in for several approvers. `true` is refused (`$.satisfiesQuorum`).
   *
   * @deprecated Leave it out; only `false` is accepted.
   */
  readonly satisfiesQuorum?: false;
}

/** Why `satisfiesQuorum: true` is refused, wherever a grant is asked for. */
export const QUORUM_WITHDRAWN: InputIssue = Object.freeze({
  path: '$.satisfiesQuorum',
  message:
    'withdrawn: a grant never approves an operation that needs more than one approval (one admin cannot stand in for several approvers)',
});

/** The grant, or why it was not created. */
export type GrantResult =
  | { readonly kind: 'granted'; readonly grant: Grant }
  | { readonly kind: 'invalid_grant'; readonly issues: readonly InputIssue[] }
  | { readonly kind: 'forbidden'; readonly reason: 'forbidden'; readonly message: string }
  | CorruptAuditChain;

/** What a grant did to a new proposal (`O`: the proposal's outcome type, per kind in a typed engine). */
export type GrantDecision<O extends Outcome = Outcome> =
  | { readonly kind: 'approved_by_grant'; readonly grantId: string; readonly outcome: O }
  | {
      readonly kind: 'refused';
      readonly reason:
        | 'outside_grant'
        | 'grant_exhausted'
        | 'grant_revoked'
        | 'expired'
        | 'corrupt_approval_record';
      readonly grantId: string;
      /** Names the failing constraint, e.g. `$.amount_minor: 15000 > max 10000`. */
      readonly detail: string;
    };

/** Every field of a grant but its seal: what the seal covers, usage and revocation included. */
export function grantSealed(record: GrantRecord): Omit<GrantRecord, 'seal'> {
  const { seal: _seal, ...sealed } = record;
  return sealed;
}

/** The seal of a grant record with the server key, or null without one. */
function grantSeal(ctx: EngineContext, record: GrantRecord): string | null {
  return ctx.sealKey ? seal({ grant: grantSealed(record) }, ctx.sealKey) : null;
}

/**
 * True when the grant's stored seal verifies with the server key (always without a key). A row
 * inserted or changed without the key (cap raised, usage reset, expiry moved, revocation cleared,
 * subject or bounds changed) does not.
 */
export function grantIntact(ctx: Pick<EngineContext, 'sealKey'>, record: GrantRecord): boolean {
  if (!ctx.sealKey) return true;
  return record.seal !== null && verifySeal({ grant: grantSealed(record) }, ctx.sealKey, record.seal);
}

/** The new seal of a grant after a change, valid only while its usage is still what was read. */
function resealed(ctx: EngineContext, before: GrantRecord, after: GrantRecord): GrantStateSeal | undefined {
  const sealed = grantSeal(ctx, after);
  return sealed === null
    ? undefined
    : { from: { usedCount: before.usedCount, usedTotal: before.usedTotal }, seal: sealed };
}

const isAdmin = (actor: Actor, tenant: string) =>
  actor.tenant === tenant && actor.kind === 'operator' && actor.roles.includes('admin');

/**
 * Creates a grant after checking its constraints against the scopes of the operations it covers. A
 * tenant whose audit chain cannot take the `granted` event creates none: `corrupt_audit_chain`.
 */
export async function grant(ctx: EngineContext, input: GrantInput): Promise<GrantResult> {
  if (!isAdmin(input.grantedBy, input.tenant))
    return { kind: 'forbidden', reason: 'forbidden', message: 'creating a grant requires the admin role' };
  const issues: InputIssue[] = [];
  const now = ctx.clock.now();
  const operations = input.operations.map((kind) => ctx.operations.get(kind));
  input.operations.forEach((kind, i) => {
    const operation = operations[i];
    if (!operation) issues.push({ path: `$.operations[${i}]`, message: `unknown operation "${kind}"` });
    else if (!operation.resourceOf)
      issues.push({
        path: `$.operations[${i}]`,
        message: `${kind} does not name its resource from its arguments, so a resource bound cannot be checked`,
      });
  });
  if (input.operations.length === 0) issues.push({ path: '$.operations', message: 'at least one operation' });
  if (typeof input.subject !== 'string' || !input.subject.startsWith('agent:'))
    issues.push({ path: '$.subject', message: 'an agent principal such as agent:acme-assistant' });
  if (typeof input.resource !== 'string' || input.resource.length === 0 || input.resource === '*') {
    issues.push({
      path: '$.resource',
      message: 'a resource or a resource prefix ending in * (never everything)',
    });
  }
  const expiresAt = input.expiresAt instanceof Date ? input.expiresAt.getTime() : input.expiresAt;
  if (!Number.isSafeInteger(expiresAt) || expiresAt <= now)
    issues.push({ path: '$.expiresAt', message: 'a time in the future' });
  const cap = input.cap ?? {};
  for (const key of ['total', 'uses'] as const) {
    const value = cap[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0))
      issues.push({ path: `$.cap.${key}`, message: 'a whole number ≥ 0' });
  }
  if ((cap.total !== undefined) !== (cap.field !== undefined))
    issues.push({
      path: '$.cap',
      message: 'a cumulative total needs the field it sums, and a field needs a total',
    });
  if (Object.keys(input.constraints).length === 0 && cap.total === undefined && cap.uses === undefined) {
    issues.push({ path: '$.constraints', message: 'a grant needs at least one constraint or cap' });
  }
  // Checked at run time too: a JavaScript caller or an old client may still send it.
  const { satisfiesQuorum } = input as { readonly satisfiesQuorum?: unknown };
  if (satisfiesQuorum !== undefined && satisfiesQuorum !== false) issues.push(QUORUM_WITHDRAWN);
  const known = operations.filter((o) => o !== undefined);
  issues.push(...grantIssues(known, input.constraints, cap.field ?? null));
  if (issues.length > 0) return { kind: 'invalid_grant', issues };

  const unsealed: GrantRecord = {
    tenant: input.tenant,
    id: newId('grt'),
    subject: input.subject,
    operationsJson: canonicalize([...new Set(input.operations)].sort()),
    resource: input.resource,
    constraintsJson: canonicalize(input.constraints),
    capField: cap.field ?? null,
    capTotal: cap.total ?? null,
    capUses: cap.uses ?? null,
    usedCount: 0,
    usedTotal: 0,
    expiresAt,
    createdAt: now,
    createdBy: input.grantedBy.id,
    revokedAt: null,
    revokedBy: null,
    note: input.note?.slice(0, 500) ?? null,
    satisfiesQuorum: false,
    seal: null,
  };
  const record: GrantRecord = { ...unsealed, seal: grantSeal(ctx, unsealed) };
  return refusingCorruptChain(
    ctx,
    () => insertGrant(ctx, input, record, now),
    (refused) => refused,
  );
}

/** Stores a checked, sealed grant with its `granted` event. */
async function insertGrant(
  ctx: EngineContext,
  input: GrantInput,
  record: GrantRecord,
  now: number,
): Promise<GrantResult> {
  await inTransaction(ctx, async (t) => {
    await t.tx.insertGrant(record);
    await t.record({
      tenant: record.tenant,
      proposalId: record.id,
      runId: '-',
      step: 'granted',
      actor: input.grantedBy.id,
      detail: {
        subject: record.subject,
        operations: parseStoredJson(record.operationsJson),
        resource: record.resource,
        constraints: parseStoredJson(record.constraintsJson),
        cap: { field: record.capField, total: record.capTotal, uses: record.capUses },
        expiresAt: record.expiresAt,
      },
    });
  });
  return { kind: 'granted', grant: toGrant(record, now) };
}

/** `revoked`, or why not. */
export type RevokeResult =
  | { readonly kind: 'revoked' }
  | {
      readonly kind: 'not_revocable';
      readonly reason: 'not_found' | 'forbidden' | 'grant_revoked' | 'corrupt_audit_chain';
      readonly message: string;
    };

/**
 * Revokes a grant: from the commit on, no proposal is approved by it. A tenant whose audit chain
 * cannot take the `revoked` event revokes nothing: `corrupt_audit_chain`, and the grant stays live.
 */
export async function revoke(
  ctx: EngineContext,
  input: { tenant: string; grantId: string; actor: Actor },
): Promise<RevokeResult> {
  if (input.actor.tenant !== input.tenant)
    return { kind: 'not_revocable', reason: 'not_found', message: 'no such grant' };
  return refusingCorruptChain(
    ctx,
    () => revokeInTransaction(ctx, input),
    (refused): RevokeResult => ({ kind: 'not_revocable', reason: refused.reason, message: refused.message }),
  );
}

function revokeInTransaction(
  ctx: EngineContext,
  input: { tenant: string; grantId: string; actor: Actor },
): Promise<RevokeResult> {
  return inTransaction(ctx, async (t): Promise<RevokeResult> => {
    const record = await t.tx.getGrant(input.tenant, input.grantId);
    if (!record) return { kind: 'not_revocable', reason: 'not_found', message: 'no such grant' };
    if (!isAdmin(input.actor, input.tenant))
      return {
        kind: 'not_revocable',
        reason: 'forbidden',
        message: 'revoking a grant requires the admin role',
      };
    const { now } = t;
    if (!(await revokeOnce(ctx, t, record, { by: input.actor.id, now }))) {
      return { kind: 'not_revocable', reason: 'grant_revoked', message: 'the grant was already revoked' };
    }
    await t.record({
      tenant: input.tenant,
      proposalId: record.id,
      runId: '-',
      step: 'revoked',
      actor: input.actor.id,
      reason: 'grant_revoked',
    });
    return { kind: 'revoked' };
  });
}

/**
 * Revokes one grant row, resealed with a key. A concurrent spend can change the usage between the
 * read and the revocation (PostgreSQL, READ COMMITTED): then the row is read again and the seal
 * recomputed. False when it is (or became) revoked.
 */
async function revokeOnce(
  ctx: EngineContext,
  t: StepTransaction,
  first: GrantRecord,
  { by, now }: { readonly by: string; readonly now: number },
): Promise<boolean> {
  let record: GrantRecord | undefined = first;
  for (let tries = 0; tries < 5 && record && record.revokedAt === null; tries++) {
    const sealed = resealed(ctx, record, { ...record, revokedAt: now, revokedBy: by });
    if (await t.tx.revokeGrant(record.tenant, record.id, { by, now, ...(sealed ? { sealed } : {}) }))
      return true;
    if (!sealed) return false;
    record = await t.tx.getGrant(record.tenant, record.id);
  }
  return false;
}

/** A tenant's grants with their usage, newest first. */
export async function listGrants(
  ctx: EngineContext,
  tenant: string,
  query: { subject?: string; limit?: number } = {},
): Promise<Grant[]> {
  const now = ctx.clock.now();
  const records = await ctx.store.read((tx) =>
    tx.listGrants(tenant, {
      limit: Math.min(query.limit ?? 100, 500),
      ...(query.subject ? { subject: query.subject } : {}),
    }),
  );
  return records.map((r) => toGrant(r, now));
}

/** One grant of `tenant` by id, with its usage as of now. */
export async function getGrant(
  ctx: EngineContext,
  tenant: string,
  grantId: string,
): Promise<Grant | undefined> {
  const record = await ctx.store.read((tx) => tx.getGrant(tenant, grantId));
  return record ? toGrant(record, ctx.clock.now()) : undefined;
}

const GRANT_PAGE = 100;

/**
 * Every grant (live or not) of the proposing agent that names the proposal's operation, oldest
 * last. Pages through all of the agent's grants; one indexed query when it has fewer than a page.
 */
export async function coveringGrants(
  reader: Pick<StoreReader, 'listGrants'>,
  record: Pick<ProposalRecord, 'tenant' | 'requestedBy' | 'operation'>,
): Promise<GrantRecord[]> {
  const covering: GrantRecord[] = [];
  let before: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await reader.listGrants(record.tenant, {
      subject: record.requestedBy,
      limit: GRANT_PAGE,
      ...(before ? { before } : {}),
    });
    for (const g of page)
      if ((parseStoredJson(g.operationsJson) as string[]).includes(record.operation)) covering.push(g);
    const last = page.at(-1);
    if (page.length < GRANT_PAGE || !last) return covering;
    before = { createdAt: last.createdAt, id: last.id };
  }
}

/**
 * Why a grant row whose seal verifies is not the grant's latest state, or undefined. A database
 * writer can write back an earlier genuine copy (fewer uses, or not yet revoked), seal included;
 * the audit, chained and sealed, still records every approval and the revocation made since.
 */
function restoredCopy({ grant, approvals, revoked }: GrantHistory): string | undefined {
  if (approvals > grant.usedCount)
    return `grant ${grant.id} approved ${approvals} proposals by its audit, but its row counts ${grant.usedCount} uses: an earlier copy was written back`;
  if (revoked && grant.revokedAt === null)
    return `grant ${grant.id} was revoked by its audit, but its row is not: an earlier copy was written back`;
  return undefined;
}

/** How a candidate grant fits a proposal, once its seal and its audit were checked. */
type CheckedFit = GrantFit | { kind: 'refused'; reason: 'corrupt_approval_record'; detail: string };

// Refusals are ranked so the operator sees the most useful one when no grant fits.
const RANK = {
  corrupt_approval_record: 5,
  grant_exhausted: 4,
  outside_grant: 3,
  expired: 2,
  grant_revoked: 1,
} as const;

/**
 * Inside the proposal's own transaction: finds the subject's grants that cover this operation, and
 * if one fits, spends it (a compare-and-set that holds caps under concurrency) and claims the
 * proposal through the same claim as a human approval. Returns the contract to execute, the
 * refusal to report, or nothing when no grant covers this operation.
 */
export async function applyGrants(
  ctx: EngineContext,
  t: StepTransaction,
  record: ProposalRecord,
  route?: Pick<ProposalRouteRecord, 'routeName' | 'group'>,
): Promise<
  | { kind: 'claimed'; grantId: string; contract: ExecutionContract }
  | (GrantDecision & { kind: 'refused' })
  | undefined
> {
  const candidates = await coveringGrants(t.tx, record);
  if (candidates.length === 0) return undefined;
  const scope = parseStoredJson(record.scopeJson) as Record<string, unknown>;
  const { now } = t;
  // Only a resource the operation derived from the frozen arguments is held against a grant's
  // bound; a label the caller chose never is.
  const named = ctx.operations.get(record.operation)?.resourceOf !== undefined;
  const required = policyOf(record).required;
  let refusal: (GrantDecision & { kind: 'refused' }) | undefined;
  // A grant never stands in for a quorum: one admin's grant would be one person deciding what
  // the policy gave to several. Grants stored with the retired satisfiesQuorum flag included.
  // Nor for a route: the route gave the decision to its group, and a grant is an admin's decision.
  const judge = (grant: GrantRecord): CheckedFit =>
    !grantIntact(ctx, grant)
      ? {
          kind: 'refused',
          reason: 'corrupt_approval_record',
          detail: `grant ${grant.id} is not sealed by this server`,
        }
      : route !== undefined
        ? {
            kind: 'refused',
            reason: 'outside_grant',
            detail: `routed to the group ${route.group} (route ${route.routeName}); a grant approves only what no route gives to a group (grant ${grant.id})`,
          }
        : required > 1
          ? {
              kind: 'refused',
              reason: 'outside_grant',
              detail: `needs ${required} approvals; a grant approves only what one approver may (grant ${grant.id})`,
            }
          : named
            ? evaluateGrant(grant, scope, record.resource, now)
            : {
                kind: 'refused',
                reason: 'outside_grant',
                detail: `${record.operation} does not name its resource from its arguments`,
              };
  for (const listed of [...candidates].reverse()) {
    let candidate = listed;
    let fit = judge(candidate);
    if (fit.kind === 'fits') {
      // A grant about to approve is read again, locked where rows lock, with what its audit
      // records: a row written back to an earlier copy is refused; otherwise the current row is
      // judged (a concurrent spend may have used it up) and spent, which the lock lets succeed.
      const history = await t.tx.grantHistory(candidate.tenant, candidate.id);
      const restored = history && restoredCopy(history);
      if (restored) fit = { kind: 'refused', reason: 'corrupt_approval_record', detail: restored };
      else if (history) {
        candidate = history.grant;
        fit = judge(candidate);
      }
    }
    const sealed =
      fit.kind === 'fits'
        ? resealed(ctx, candidate, {
            ...candidate,
            usedCount: candidate.usedCount + 1,
            usedTotal: candidate.usedTotal + fit.amount,
          })
        : undefined;
    if (
      fit.kind === 'fits' &&
      (await t.tx.spendGrant(record.tenant, candidate.id, {
        amount: fit.amount,
        now,
        ...(sealed ? { sealed } : {}),
      }))
    ) {
      const claimed = await claim(ctx, t, record, {
        actor: `grant:${candidate.id}`,
        kind: 'grant',
        grantId: candidate.id,
        seenDigest: record.digest,
      });
      if (claimed.kind !== 'claimed')
        throw new Error(`a fresh proposal could not be claimed by grant ${candidate.id}`);
      return { kind: 'claimed', grantId: candidate.id, contract: claimed.contract };
    }
    const next: GrantDecision & { kind: 'refused' } =
      fit.kind === 'refused'
        ? { kind: 'refused', reason: fit.reason, grantId: candidate.id, detail: fit.detail }
        : {
            kind: 'refused',
            reason: 'grant_exhausted',
            grantId: candidate.id,
            detail: `grant ${candidate.id} was spent by a concurrent proposal`,
          };
    if (!refusal || RANK[next.reason] > RANK[refusal.reason]) refusal = next;
  }
  if (refusal) {
    await t.record({
      tenant: record.tenant,
      proposalId: record.id,
      operation: record.operation,
      proposedAt: record.createdAt,
      runId: record.runId,
      step: 'denied',
      actor: `grant:${refusal.grantId}`,
      reason: refusal.reason,
      digests: { proposed: record.digest },
      detail: { grantId: refusal.grantId, constraint: refusal.detail, note: 'waiting for a human approval' },
    });
  }
  return refusal;
}
