import type { Actor } from '../operation/actor.js';
import type { GroupRecord, RouteRecord } from '../store/records.js';
import { inTransaction } from './audit-step.js';
import { refusingCorruptChain } from './corrupt-audit-chain.js';
import type { EngineContext } from './engine-context.js';
import { newId } from './ids.js';
import { withdrawLapsedApprovals } from './withdraw-approvals.js';

/** A group: a tenant's named set of approvers (principal ids, e.g. `user:ana@acme.test`) a route names. */
export interface Group {
  readonly name: string;
  readonly members: readonly string[];
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/**
 * A route: sends a tenant's proposals of one operation — optionally only above an amount (a scope
 * field in minor units) or only for a resource pattern (`invoice:*`) — to a group and a channel,
 * and escalates them to another group and channel when still undecided after `escalation.afterMs`.
 * Routes are tried in `position` order; the first that matches a new proposal is its route.
 */
export interface Route {
  readonly id: string;
  readonly name: string;
  readonly position: number;
  readonly operation: string;
  readonly resource: string | null;
  readonly amount: { readonly field: string; readonly above: number } | null;
  readonly group: string;
  readonly channel: string | null;
  readonly escalation: {
    readonly afterMs: number;
    readonly group: string;
    readonly channel: string | null;
  } | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What an admin gives to create or replace a route (`position` defaults to after the last route). */
export interface RouteInput {
  readonly name: string;
  readonly operation: string;
  readonly resource?: string | null;
  readonly amount?: { readonly field: string; readonly above: number } | null;
  readonly group: string;
  readonly channel?: string | null;
  readonly escalation?: {
    readonly afterMs: number;
    readonly group: string;
    readonly channel?: string | null;
  } | null;
  readonly position?: number;
}

/** Why a change of routes or groups was refused. */
export type RoutingRefusal = {
  readonly kind: 'refused';
  readonly reason: 'forbidden' | 'invalid_request' | 'not_found' | 'corrupt_audit_chain';
  readonly message: string;
};

/** A saved route, or why not. */
export type SaveRouteResult = { readonly kind: 'saved'; readonly route: Route } | RoutingRefusal;
/** A saved group, or why not. */
export type SaveGroupResult = { readonly kind: 'saved'; readonly group: Group } | RoutingRefusal;
/** A deleted route or group, or why not. */
export type DeleteRoutingResult = { readonly kind: 'deleted' } | RoutingRefusal;

const GROUP_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const MAX_MEMBERS = 200;
const MAX_ROUTES = 200;
const MAX_ESCALATION_MS = 30 * 24 * 3_600_000;

function toGroup(record: GroupRecord): Group {
  return Object.freeze({
    name: record.name,
    members: Object.freeze([...record.members]),
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  });
}

function toRoute(record: RouteRecord): Route {
  return Object.freeze({
    id: record.id,
    name: record.name,
    position: record.position,
    operation: record.operation,
    resource: record.resource,
    amount:
      record.amountField !== null
        ? Object.freeze({ field: record.amountField, above: record.above ?? 0 })
        : null,
    group: record.group,
    channel: record.channel,
    escalation:
      record.escalateAfterMs !== null && record.escalationGroup !== null
        ? Object.freeze({
            afterMs: record.escalateAfterMs,
            group: record.escalationGroup,
            channel: record.escalationChannel,
          })
        : null,
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  });
}

/** A tenant's groups, by name. */
export async function listGroups(ctx: EngineContext, tenant: string): Promise<Group[]> {
  return (await ctx.store.read((tx) => tx.listGroups(tenant))).map(toGroup);
}

/** A tenant's routes, in the order they are tried. */
export async function listRoutes(ctx: EngineContext, tenant: string): Promise<Route[]> {
  return (await ctx.store.read((tx) => tx.listRoutes(tenant))).map(toRoute);
}

const refused = (reason: RoutingRefusal['reason'], message: string): RoutingRefusal => ({
  kind: 'refused',
  reason,
  message,
});

/** Only an admin of the tenant changes its routes and groups. */
function adminRefusal(actor: Actor, tenant: string): RoutingRefusal | undefined {
  if (actor.kind === 'operator' && actor.tenant === tenant && actor.roles.includes('admin')) return undefined;
  return refused('forbidden', 'only an admin of the tenant manages its routes and groups');
}

const invalid = (path: string, message: string) => refused('invalid_request', `${path}: ${message}`);

function shortText(value: unknown, max: number): value is string {
  return typeof value === 'string' && value.trim() === value && value.length >= 1 && value.length <= max;
}

/** Checks a route's fields that need no database; the groups are checked in the transaction. */
function checkRoute(ctx: EngineContext, input: RouteInput): RoutingRefusal | undefined {
  if (!shortText(input.name, 80))
    return invalid('$.name', 'one to 80 characters, no leading or trailing space');
  if (!ctx.operations.has(input.operation))
    return invalid(
      '$.operation',
      `not a registered operation (known: ${[...ctx.operations.keys()].join(', ')})`,
    );
  const { resource, amount, channel, escalation, position } = input;
  if (resource != null && (!shortText(resource, 200) || resource.slice(0, -1).includes('*')))
    return invalid('$.resource', 'a resource, or a prefix ending in * (invoice:*)');
  // As for grants: the resource of an operation that does not name it is the caller's label, which
  // an agent could set to slip past the route.
  if (resource != null && ctx.operations.get(input.operation)?.resourceOf === undefined)
    return invalid(
      '$.resource',
      `${input.operation} does not name its resource from its arguments, so a resource route cannot be held to it`,
    );
  if (amount != null) {
    if (
      !/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(amount.field) ||
      amount.field.length > 100
    )
      return invalid('$.amount.field', 'a scope field name in minor units, such as amount_minor');
    if (!Number.isSafeInteger(amount.above) || amount.above < 0)
      return invalid('$.amount.above', 'a whole number of minor units, 0 or more');
  }
  if (channel != null && !shortText(channel, 80)) return invalid('$.channel', 'one to 80 characters');
  if (escalation != null) {
    if (
      !Number.isSafeInteger(escalation.afterMs) ||
      escalation.afterMs < 1_000 ||
      escalation.afterMs > MAX_ESCALATION_MS
    )
      return invalid('$.escalation.afterMs', 'milliseconds, from 1,000 (one second) to 30 days');
    if (escalation.channel != null && !shortText(escalation.channel, 80))
      return invalid('$.escalation.channel', 'one to 80 characters');
  }
  if (position !== undefined && (!Number.isSafeInteger(position) || position < 0 || position > 1_000_000))
    return invalid('$.position', 'a whole number from 0 to 1,000,000');
  return undefined;
}

/**
 * Creates a route (without `id`) or replaces one of the tenant's (with `id`), as an admin of the
 * tenant; the groups it names must exist. Audited `route_changed`. Pending proposals keep the
 * route they were given: only new proposals are routed by the change.
 */
export async function saveRoute(
  ctx: EngineContext,
  input: { readonly tenant: string; readonly id?: string; readonly route: RouteInput; readonly actor: Actor },
): Promise<SaveRouteResult> {
  const { tenant, actor, route } = input;
  const denied = adminRefusal(actor, tenant) ?? checkRoute(ctx, route);
  if (denied) return denied;
  return refusingCorruptChain(
    ctx,
    () =>
      inTransaction(ctx, async (t): Promise<SaveRouteResult> => {
        const [routes, groups] = await Promise.all([t.tx.listRoutes(tenant), t.tx.listGroups(tenant)]);
        const before = input.id === undefined ? undefined : routes.find((r) => r.id === input.id);
        if (input.id !== undefined && !before) return refused('not_found', 'no such route');
        if (!before && routes.length >= MAX_ROUTES)
          return invalid('$', `a tenant has at most ${MAX_ROUTES} routes`);
        const names = new Set(groups.map((g) => g.name));
        if (!names.has(route.group)) return invalid('$.group', `no group ${route.group}: create it first`);
        if (route.escalation && !names.has(route.escalation.group))
          return invalid('$.escalation.group', `no group ${route.escalation.group}: create it first`);
        const record: RouteRecord = {
          tenant,
          id: before?.id ?? newId('rte'),
          name: route.name,
          position: route.position ?? before?.position ?? Math.max(-1, ...routes.map((r) => r.position)) + 1,
          operation: route.operation,
          resource: route.resource ?? null,
          amountField: route.amount?.field ?? null,
          above: route.amount ? route.amount.above : null,
          group: route.group,
          channel: route.channel ?? null,
          escalateAfterMs: route.escalation?.afterMs ?? null,
          escalationGroup: route.escalation?.group ?? null,
          escalationChannel: route.escalation?.channel ?? null,
          createdAt: before?.createdAt ?? t.now,
          updatedAt: t.now,
        };
        await t.tx.putRoute(record);
        const saved = toRoute(record);
        await t.record({
          tenant,
          proposalId: record.id,
          runId: '-',
          step: 'route_changed',
          actor: actor.id,
          detail: { action: before ? 'updated' : 'created', route: routeDetail(saved) },
        });
        return { kind: 'saved', route: saved };
      }),
    (r) => refused(r.reason, r.message),
  );
}

/** What the audit records of a route: every field that routes, none that is secret. */
function routeDetail(route: Route): Record<string, unknown> {
  return {
    id: route.id,
    name: route.name,
    position: route.position,
    operation: route.operation,
    resource: route.resource,
    amount: route.amount,
    group: route.group,
    channel: route.channel,
    escalation: route.escalation,
  };
}

/** Deletes one of the tenant's routes, as an admin of the tenant. Audited `route_changed`. */
export async function deleteRoute(
  ctx: EngineContext,
  input: { readonly tenant: string; readonly id: string; readonly actor: Actor },
): Promise<DeleteRoutingResult> {
  const { tenant, actor } = input;
  const denied = adminRefusal(actor, tenant);
  if (denied) return denied;
  return refusingCorruptChain(
    ctx,
    () =>
      inTransaction(ctx, async (t): Promise<DeleteRoutingResult> => {
        const before = (await t.tx.listRoutes(tenant)).find((r) => r.id === input.id);
        if (!before || !(await t.tx.deleteRoute(tenant, input.id)))
          return refused('not_found', 'no such route');
        await t.record({
          tenant,
          proposalId: before.id,
          runId: '-',
          step: 'route_changed',
          actor: actor.id,
          detail: { action: 'deleted', route: routeDetail(toRoute(before)) },
        });
        return { kind: 'deleted' };
      }),
    (r) => refused(r.reason, r.message),
  );
}

/** The audit's key for a group: its name under `grp_` (routes and operators have their ids). */
export function groupAuditId(name: string): string {
  return `grp_${name}`;
}

/**
 * Creates a group or replaces its members, as an admin of the tenant: one to 200 principal ids
 * (an operator of the console is `user:<email>`). Audited `group_changed` with who was added and
 * removed. Pending proposals routed to the group are decided by its members as they are now.
 */
export async function saveGroup(
  ctx: EngineContext,
  input: {
    readonly tenant: string;
    readonly name: string;
    readonly members: readonly string[];
    readonly actor: Actor;
  },
): Promise<SaveGroupResult> {
  const { tenant, actor, name } = input;
  const denied = adminRefusal(actor, tenant);
  if (denied) return denied;
  if (typeof name !== 'string' || !GROUP_NAME.test(name))
    return invalid('$.name', 'one to 40 lower-case letters, digits, - or _ (finance)');
  const members = [...new Set(input.members)].sort();
  if (members.length > MAX_MEMBERS) return invalid('$.members', `at most ${MAX_MEMBERS} members`);
  const bad = members.findIndex((m) => !shortText(m, 320) || !m.includes(':'));
  if (bad >= 0) return invalid(`$.members[${bad}]`, 'a principal id such as user:ana@acme.test');
  const result = await refusingCorruptChain(
    ctx,
    () =>
      inTransaction(
        ctx,
        async (t): Promise<{ kind: 'saved'; group: Group; removed: boolean } | RoutingRefusal> => {
          const before = (await t.tx.listGroups(tenant)).find((g) => g.name === name);
          const record: GroupRecord = {
            tenant,
            name,
            members,
            createdAt: before?.createdAt ?? t.now,
            updatedAt: t.now,
          };
          await t.tx.putGroup(record);
          const was = new Set(before?.members ?? []);
          await t.record({
            tenant,
            proposalId: groupAuditId(name),
            runId: '-',
            step: 'group_changed',
            actor: actor.id,
            detail: {
              action: before ? 'updated' : 'created',
              group: name,
              added: members.filter((m) => !was.has(m)),
              removed: [...was].filter((m) => !members.includes(m)),
            },
          });
          return {
            kind: 'saved',
            group: toGroup(record),
            removed: [...was].some((m) => !members.includes(m)),
          };
        },
      ),
    (r) => refused(r.reason, r.message),
  );
  if (result.kind !== 'saved') return result;
  // A member removed no longer decides the group's proposals: their approvals toward a quorum go now.
  if (result.removed) await withdrawLapsedApprovals(ctx, { tenant, by: actor.id });
  return { kind: 'saved', group: result.group };
}

/**
 * Deletes one of the tenant's groups, as an admin of the tenant; refused (`invalid_request`) while
 * a route names it. Pending proposals already routed to it can then be decided by no one (they
 * escalate or expire). Audited `group_changed`.
 */
export async function deleteGroup(
  ctx: EngineContext,
  input: { readonly tenant: string; readonly name: string; readonly actor: Actor },
): Promise<DeleteRoutingResult> {
  const { tenant, actor, name } = input;
  const denied = adminRefusal(actor, tenant);
  if (denied) return denied;
  return refusingCorruptChain(
    ctx,
    () =>
      inTransaction(ctx, async (t): Promise<DeleteRoutingResult> => {
        const user = (await t.tx.listRoutes(tenant)).find(
          (r) => r.group === name || r.escalationGroup === name,
        );
        if (user) return invalid('$.name', `the route ${user.name} names the group ${name}: change it first`);
        const before = (await t.tx.listGroups(tenant)).find((g) => g.name === name);
        if (!before || !(await t.tx.deleteGroup(tenant, name))) return refused('not_found', 'no such group');
        await t.record({
          tenant,
          proposalId: groupAuditId(name),
          runId: '-',
          step: 'group_changed',
          actor: actor.id,
          detail: { action: 'deleted', group: name, added: [], removed: before.members },
        });
        return { kind: 'deleted' };
      }),
    (r) => refused(r.reason, r.message),
  );
}
