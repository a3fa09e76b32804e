import type { AuditEvent, AuditStep } from '../audit/event.js';
import { displayHash } from '../canonical/digest.js';
import { ConfigurationError } from '../canonical/errors.js';
import type { AuditQuery, ProposalSort, StoreReader } from '../store/store.js';
import type { ApprovalRecord, ProposalRecord, ProposalStatus } from '../store/records.js';
import type { Actor } from '../operation/actor.js';
import type { EngineContext } from './engine-context.js';
import { policyOf, type Proposal, toProposal } from './proposal.js';
import type { OperationKind, Operations, ProposalOf } from './operation-types.js';
import { routeOf, routesOf } from './routing.js';

/** One page of a tenant's proposals, newest first (of kinds `K` on a typed engine). */
export interface ProposalPage<
  Ops extends Operations = Operations,
  K extends OperationKind<Ops> = OperationKind<Ops>,
> {
  readonly items: readonly ProposalOf<Ops, K>[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  readonly nextCursor?: string;
}

/** How to narrow a list of proposals (`Kind`: a typed engine's registered kinds). */
export interface ListInput<Kind extends string = string> {
  readonly status?: ProposalStatus | readonly ProposalStatus[];
  readonly runId?: string;
  readonly operation?: Kind;
  /** Only the proposals this principal made; the cursor then never names anyone else's. */
  readonly requestedBy?: string;
  /** A proposal id, a short hash (or longer digest prefix), or words of the preview's title. */
  readonly search?: string;
  /** Only proposals last changed at or after this time (epoch ms). */
  readonly updatedSince?: number;
  /**
   * "Needs you": only the proposals this actor may still decide: pending and not expired, and
   * `engine.proposals.mayDecide(actor, proposal, 'approve')` allows it (an operator of the tenant with the
   * approval right, not its proposer, not its editor unless editor approval is allowed, not
   * already among its approvers). Another tenant's actor gets none. Combines with the other
   * filters; a `status` other than `pending` matches nothing.
   */
  readonly decidableBy?: Actor;
  /** The order (default `created`, newest first); a cursor belongs to the order it came from. */
  readonly sort?: ProposalSort;
  /** 1–200, default 50. */
  readonly limit?: number;
  readonly cursor?: string;
}

/** Which proposals {@link countListed} counts: a list's filters, without order or page. */
export type CountInput<Kind extends string = string> = Omit<ListInput<Kind>, 'sort' | 'limit' | 'cursor'>;

/** The recorded approvals of a proposal that needs several; none is read for a single approval. */
async function approvalsOf(tx: StoreReader, record: ProposalRecord): Promise<ApprovalRecord[]> {
  return policyOf(record).required > 1 ? tx.listApprovals(record.tenant, record.id) : [];
}

/** One proposal of a tenant, or undefined (another tenant's proposal is indistinguishable from a missing one). */
export async function getProposal(
  ctx: EngineContext,
  tenant: string,
  proposalId: string,
): Promise<Proposal | undefined> {
  const found = await ctx.store.read(async (tx) => {
    const record = await tx.getProposal(tenant, proposalId);
    return record
      ? { record, approvals: await approvalsOf(tx, record), route: await routeOf(tx, tenant, record.id) }
      : undefined;
  });
  return found ? toProposal(found.record, ctx.clock.now(), found.approvals, found.route) : undefined;
}

type Position =
  | { readonly sort: 'created'; readonly createdAt: number; readonly id: string }
  | { readonly sort: 'expires' | 'amount'; readonly key: number; readonly id: string };

function decodeCursor(cursor: string | undefined): Position | undefined {
  if (!cursor) return undefined;
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const created = /^(\d{1,15})~(prp_[0-9a-z]{1,40})$/.exec(text);
  if (created) return { sort: 'created', createdAt: Number(created[1]), id: created[2]! };
  const keyed = /^(expires|amount)~(-?\d{1,16}(?:\.\d{1,16})?)~(prp_[0-9a-z]{1,40})$/.exec(text);
  return keyed ? { sort: keyed[1] as 'expires' | 'amount', key: Number(keyed[2]), id: keyed[3]! } : undefined;
}

/** Whether a string is a proposal list cursor (a `nextCursor` this engine returned). */
export function isListCursor(cursor: string): boolean {
  return decodeCursor(cursor) !== undefined;
}

/** A preview's `amount.minor` when it is a number, else -1: the store's amount order, in code. */
function previewAmount(preview: unknown): number {
  const amount = typeof preview === 'object' && preview !== null ? Reflect.get(preview, 'amount') : undefined;
  const minor = typeof amount === 'object' && amount !== null ? Reflect.get(amount, 'minor') : undefined;
  return typeof minor === 'number' && Number.isFinite(minor) ? minor : -1;
}

function amountKey(record: ProposalRecord): number {
  try {
    return previewAmount(JSON.parse(record.previewJson));
  } catch {
    return -1;
  }
}

function encodeCursor(sort: ProposalSort, last: ProposalRecord): string {
  const text =
    sort === 'created'
      ? `${last.createdAt}~${last.id}`
      : `${sort}~${sort === 'expires' ? last.expiresAt : amountKey(last)}~${last.id}`;
  return Buffer.from(text).toString('base64url');
}

/**
 * The cursor that continues a list in `sort` order after `last` (the same cursor {@link listProposals}
 * returns for a page ending there): for lists filtered after the store read them.
 */
export function cursorAfter(sort: ProposalSort, last: Proposal): string {
  const text =
    sort === 'created'
      ? `${last.createdAt.getTime()}~${last.id}`
      : `${sort}~${sort === 'expires' ? last.expiresAt.getTime() : previewAmount(last.preview)}~${last.id}`;
  return Buffer.from(text).toString('base64url');
}

/**
 * A tenant's proposals in `input.sort` order (newest first by default), paginated by an opaque
 * cursor. A cursor from another order (or not from this engine) starts at the first page.
 */
export async function listProposals(
  ctx: EngineContext,
  tenant: string,
  input: ListInput = {},
): Promise<ProposalPage> {
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 50), 1), 200);
  const sort = input.sort ?? 'created';
  const decoded = decodeCursor(input.cursor);
  const position = decoded?.sort === sort ? decoded : undefined;
  const { records, approvals, routes } = await ctx.store.read(async (tx) => {
    const records = await tx.listProposals(tenant, {
      limit: limit + 1,
      ...filterOf(input),
      ...(sort !== 'created' ? { sort } : {}),
      ...(position?.sort === 'created'
        ? { before: { createdAt: position.createdAt, id: position.id } }
        : position
          ? { after: { key: position.key, id: position.id } }
          : {}),
    });
    const approvals = await Promise.all(records.slice(0, limit).map((r) => approvalsOf(tx, r)));
    const routes = await routesOf(
      tx,
      tenant,
      records.slice(0, limit).map((r) => r.id),
    );
    return { records, approvals, routes };
  });
  const page = records.slice(0, limit);
  const last = page[page.length - 1];
  const now = ctx.clock.now();
  return {
    items: page.map((r, i) => toProposal(r, now, approvals[i], routes.get(r.id) ?? null)),
    ...(records.length > limit && last ? { nextCursor: encodeCursor(sort, last) } : {}),
  };
}

function filterOf(input: CountInput) {
  return {
    ...(input.status !== undefined ? { status: input.status } : {}),
    ...(input.runId !== undefined ? { runId: input.runId } : {}),
    ...(input.operation !== undefined ? { operation: input.operation } : {}),
    ...(input.requestedBy !== undefined ? { requestedBy: input.requestedBy } : {}),
    ...(input.search !== undefined ? { search: input.search } : {}),
    ...(input.updatedSince !== undefined ? { updatedSince: input.updatedSince } : {}),
  };
}

/** How many of a tenant's proposals match `input`: all of them, never a page. */
export async function countListed(
  ctx: EngineContext,
  tenant: string,
  input: CountInput = {},
): Promise<number> {
  return ctx.store.read((tx) => tx.countMatchingProposals(tenant, filterOf(input)));
}

/** An audit event with the short hashes an operator matches by eye. */
export interface AuditLine extends AuditEvent {
  /** Per digest, its short hash, or `invalid:…` when the stored value is not a digest (see `displayHash`). */
  readonly short: {
    readonly proposed?: string;
    readonly seen?: string;
    readonly approved?: string;
    readonly requested?: string;
  };
}

/** An audit event as a line, with short hashes that never throw on a malformed stored value. */
export function toAuditLine(e: AuditEvent): AuditLine {
  const digests: object = typeof e.digests === 'object' && e.digests !== null ? e.digests : {};
  return { ...e, short: Object.fromEntries(Object.entries(digests).map(([k, v]) => [k, displayHash(v)])) };
}

/** One page of a proposal's audit events, in chain order. */
export interface AuditPage {
  readonly events: readonly AuditLine[];
  /** Pass back as `cursor` for the next page; absent on the last page. */
  readonly nextCursor?: string;
}

/** How to page and narrow a proposal's audit events. */
export interface AuditPageInput {
  /** 1–{@link AUDIT_PAGE_MAX}, default 200. */
  readonly limit?: number;
  /** The `nextCursor` of the previous page (check outside input with {@link isAuditCursor}). */
  readonly cursor?: string;
  /** Only these steps. */
  readonly steps?: readonly AuditStep[];
  /** Not these steps, e.g. `['denied']` to find the decisions among any number of refusals. */
  readonly exceptSteps?: readonly AuditStep[];
}

/** The largest page of audit events one call returns. */
export const AUDIT_PAGE_MAX = 1000;

function decodeAuditCursor(cursor: string): number | undefined {
  const match = /^seq~(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return match ? Number(match[1]) : undefined;
}

/** Whether a string is an audit page cursor (a `nextCursor` this engine returned). */
export function isAuditCursor(cursor: string): boolean {
  return decodeAuditCursor(cursor) !== undefined;
}

/**
 * One page of a proposal's audit events, in chain order, paged by an opaque cursor (keyset on the
 * chain sequence: pages are disjoint and complete even while events are appended).
 *
 * @throws {ConfigurationError} when `cursor` is not one this engine returned (check with {@link isAuditCursor}).
 */
export async function proposalAuditPage(
  ctx: Pick<EngineContext, 'store'>,
  tenant: string,
  proposalId: string,
  input: AuditPageInput = {},
): Promise<AuditPage> {
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 200), 1), AUDIT_PAGE_MAX);
  const afterSeq = input.cursor === undefined ? 0 : decodeAuditCursor(input.cursor);
  if (afterSeq === undefined) throw new ConfigurationError('not an audit page cursor');
  const events = await ctx.store.read((tx) =>
    tx.listAudit(tenant, {
      proposalId,
      afterSeq,
      limit: limit + 1,
      ...(input.steps !== undefined ? { steps: input.steps } : {}),
      ...(input.exceptSteps !== undefined ? { exceptSteps: input.exceptSteps } : {}),
    }),
  );
  const page = events.slice(0, limit);
  const last = page[page.length - 1];
  return {
    events: page.map(toAuditLine),
    ...(events.length > limit && last
      ? { nextCursor: Buffer.from(`seq~${last.seq}`).toString('base64url') }
      : {}),
  };
}

/**
 * Every audit event of one proposal matching `query`, in chain order, read page by page (no cap).
 *
 * @internal
 */
export async function* auditEvents(
  ctx: Pick<EngineContext, 'store'>,
  tenant: string,
  query: Omit<AuditQuery, 'afterSeq' | 'limit'>,
): AsyncGenerator<AuditEvent> {
  let afterSeq = 0;
  for (;;) {
    const page = await ctx.store.read((tx) =>
      tx.listAudit(tenant, { ...query, afterSeq, limit: AUDIT_PAGE_MAX }),
    );
    yield* page;
    const last = page[page.length - 1];
    if (page.length < AUDIT_PAGE_MAX || !last) return;
    afterSeq = last.seq;
  }
}

/**
 * Every audit event of one proposal, in chain order, with short hashes. Reads them all, page by
 * page: an operator view should use {@link proposalAuditPage} or the collapsed timeline instead.
 */
export async function proposalAudit(
  ctx: Pick<EngineContext, 'store'>,
  tenant: string,
  proposalId: string,
): Promise<AuditLine[]> {
  const lines: AuditLine[] = [];
  for await (const e of auditEvents(ctx, tenant, { proposalId })) lines.push(toAuditLine(e));
  return lines;
}

/** Where to read a tenant's chain from (see {@link tenantAuditSince}). */
export interface AuditSinceInput {
  /** Only events with a greater `seq`; omitted (or beyond the head): from the head, so none yet. */
  readonly afterSeq?: number;
  /** 1–{@link AUDIT_PAGE_MAX}, default 200. */
  readonly limit?: number;
}

/** A slice of a tenant's whole chain and where the next read starts. */
export interface AuditSince {
  /** In chain order, at most `limit`. */
  readonly events: readonly AuditEvent[];
  /** Pass as the next `afterSeq`: the last event read, or the head when every event up to it was read. */
  readonly lastSeq: number;
}

/**
 * A tenant's audit events after a sequence number, every proposal, in chain order: what a live
 * feed polls. The head is read first in the same read, so `lastSeq` never skips an event that
 * committed after it.
 */
export async function tenantAuditSince(
  ctx: Pick<EngineContext, 'store'>,
  tenant: string,
  input: AuditSinceInput = {},
): Promise<AuditSince> {
  const limit = Math.min(Math.max(Math.trunc(input.limit ?? 200), 1), AUDIT_PAGE_MAX);
  return ctx.store.read(async (tx) => {
    const head = (await tx.auditHead(tenant))?.seq ?? 0;
    // A resume point beyond the head (another database, a reset) starts from the head.
    const afterSeq = Math.min(Math.max(Math.trunc(input.afterSeq ?? head), 0), head);
    const events = await tx.listAudit(tenant, { afterSeq, limit });
    const last = events[events.length - 1];
    const lastSeq = events.length === limit && last ? last.seq : Math.max(head, last?.seq ?? 0);
    return { events, lastSeq };
  });
}
