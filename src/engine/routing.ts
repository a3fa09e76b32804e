import { parseStoredJson } from '../canonical/stored-json.js';
import { withinResource } from '../grants/grant.js';
import type { GroupRecord, ProposalRecord, ProposalRouteRecord, RouteRecord } from '../store/records.js';
import type { StoreReader, StoreTransaction } from '../store/store.js';

/**
 * The route a proposal was given when it was created: only the members of its group may decide it
 * (approve, decline, edit), see it in "Needs you" and are notified of it; once escalated, the
 * members of the escalation group too. A proposal no route matched has none (`route: null`) and
 * goes to every approver of the tenant.
 */
export interface ProposalRoute {
  /** The route's id (`rte_…`) and name as they were when the proposal was created. */
  readonly id: string;
  readonly name: string;
  /** The group that decides it. */
  readonly group: string;
  /** Where its notifications go (a chat channel), or null. */
  readonly channel: string | null;
  /** When and to whom it is escalated if still undecided, or null when the route never escalates. */
  readonly escalation: {
    readonly at: Date;
    readonly group: string;
    readonly channel: string | null;
  } | null;
  /** When it was escalated, or null. */
  readonly escalatedAt: Date | null;
  /** Who may decide it now (principal ids): its group's members, and once escalated the escalation group's. */
  readonly deciders: readonly string[];
}

/** The channel a routed proposal's notifications go to now: the escalation's once escalated. */
export function routeChannel(route: ProposalRoute | null): string | null {
  if (route === null) return null;
  return route.escalatedAt !== null && route.escalation ? route.escalation.channel : route.channel;
}

/** The value at a dotted path (`amount_minor`, `payment.amount_minor`) of a parsed scope. */
function valueAt(scope: unknown, path: string): unknown {
  let value = scope;
  for (const key of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, key) ? Reflect.get(value, key) : undefined;
  }
  return value;
}

/** Whether a route matches a new proposal: its operation, its resource pattern, its amount. */
export function routeMatches(
  route: RouteRecord,
  proposal: { readonly operation: string; readonly resource: string; readonly scope: unknown },
): boolean {
  if (route.operation !== proposal.operation) return false;
  if (route.resource !== null && !withinResource(route.resource, proposal.resource)) return false;
  if (route.amountField !== null) {
    const amount = valueAt(proposal.scope, route.amountField);
    // No amount at that field: the route does not apply (the proposal goes to the next route).
    if (typeof amount !== 'number' || !(amount > (route.above ?? 0))) return false;
  }
  return true;
}

/**
 * Routes a new proposal inside the transaction that stores it: the first of the tenant's routes
 * (in order) that matches it is recorded as its route, before its `proposed` event, so the
 * notification of that event already goes to the routed group. Returns the recorded route, or
 * undefined when none matched.
 */
export async function routeNewProposal(
  tx: StoreTransaction,
  record: ProposalRecord,
): Promise<ProposalRouteRecord | undefined> {
  const routes = await tx.listRoutes(record.tenant);
  if (routes.length === 0) return undefined;
  const facts = {
    operation: record.operation,
    resource: record.resource,
    scope: parseStoredJson(record.scopeJson),
  };
  const route = routes.find((r) => routeMatches(r, facts));
  if (!route) return undefined;
  const escalates = route.escalateAfterMs !== null && route.escalationGroup !== null;
  const routed: ProposalRouteRecord = {
    tenant: record.tenant,
    proposalId: record.id,
    routeId: route.id,
    routeName: route.name,
    group: route.group,
    channel: route.channel,
    escalateAt: escalates ? record.createdAt + (route.escalateAfterMs ?? 0) : null,
    escalationGroup: escalates ? route.escalationGroup : null,
    escalationChannel: escalates ? route.escalationChannel : null,
    escalatedAt: null,
  };
  await tx.insertProposalRoute(routed);
  return routed;
}

/** A recorded route with who may decide now, from the tenant's groups as they are now. */
export function proposalRouteOf(record: ProposalRouteRecord, groups: readonly GroupRecord[]): ProposalRoute {
  const members = (name: string | null) => groups.find((g) => g.name === name)?.members ?? [];
  const escalated = record.escalatedAt !== null;
  const deciders = escalated
    ? [...new Set([...members(record.group), ...members(record.escalationGroup)])]
    : [...members(record.group)];
  return Object.freeze({
    id: record.routeId,
    name: record.routeName,
    group: record.group,
    channel: record.channel,
    escalation:
      record.escalateAt !== null && record.escalationGroup !== null
        ? Object.freeze({
            at: new Date(record.escalateAt),
            group: record.escalationGroup,
            channel: record.escalationChannel,
          })
        : null,
    escalatedAt: escalated ? new Date(record.escalatedAt ?? 0) : null,
    deciders: Object.freeze(deciders),
  });
}

/**
 * The routes of some of a tenant's proposals, by proposal id (unrouted ones are left out): one
 * read of their recorded routes and, when any is routed, one of the tenant's groups.
 */
export async function routesOf(
  tx: StoreReader,
  tenant: string,
  proposalIds: readonly string[],
): Promise<ReadonlyMap<string, ProposalRoute>> {
  if (proposalIds.length === 0) return new Map();
  const recorded = await tx.listProposalRoutes(tenant, proposalIds);
  if (recorded.length === 0) return new Map();
  const groups = await tx.listGroups(tenant);
  return new Map(recorded.map((r) => [r.proposalId, proposalRouteOf(r, groups)]));
}

/** The route of one of a tenant's proposals, or null when it has none. */
export async function routeOf(
  tx: StoreReader,
  tenant: string,
  proposalId: string,
): Promise<ProposalRoute | null> {
  return (await routesOf(tx, tenant, [proposalId])).get(proposalId) ?? null;
}

/** Why a routed proposal is not this actor's to decide, or undefined when it is (or is unrouted). */
export function routeRefusal(route: ProposalRoute | null, actorId: string): string | undefined {
  if (route === null || route.deciders.includes(actorId)) return undefined;
  const groups =
    route.escalatedAt !== null && route.escalation
      ? `the groups ${route.group} and ${route.escalation.group}`
      : `the group ${route.group}`;
  return `this proposal is routed to ${groups} (route ${route.name}); only their members decide it`;
}
