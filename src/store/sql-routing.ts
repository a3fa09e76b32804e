import { type SqlQuery, sql } from '../sql/sql.js';
import { pendingDueSql } from './sql-proposals.js';
import type { GroupRecord, ProposalRouteRecord, RouteRecord } from './records.js';

/** The routing statements of the SQL store (migration 23): groups, routes, each proposal's route, reminders. */
export const ROUTING_SQL = Object.freeze({
  listGroups: (tenant: string): SqlQuery =>
    sql`SELECT * FROM countersign_groups WHERE tenant = ${tenant} ORDER BY name`,
  putGroup: (g: GroupRecord): SqlQuery =>
    sql`INSERT INTO countersign_groups (tenant, name, members_json, created_at, updated_at) VALUES (${g.tenant}, ${g.name}, ${JSON.stringify(g.members)}, ${g.createdAt}, ${g.updatedAt}) ON CONFLICT (tenant, name) DO UPDATE SET members_json = excluded.members_json, updated_at = excluded.updated_at`,
  deleteGroup: (tenant: string, name: string): SqlQuery =>
    sql`DELETE FROM countersign_groups WHERE tenant = ${tenant} AND name = ${name}`,
  listRoutes: (tenant: string): SqlQuery =>
    sql`SELECT * FROM countersign_routes WHERE tenant = ${tenant} ORDER BY position, id`,
  putRoute: (r: RouteRecord): SqlQuery =>
    sql`INSERT INTO countersign_routes (tenant, id, name, position, operation, resource, amount_field, above, group_name, channel, escalate_after_ms, escalation_group, escalation_channel, created_at, updated_at) VALUES (${r.tenant}, ${r.id}, ${r.name}, ${r.position}, ${r.operation}, ${r.resource}, ${r.amountField}, ${r.above}, ${r.group}, ${r.channel}, ${r.escalateAfterMs}, ${r.escalationGroup}, ${r.escalationChannel}, ${r.createdAt}, ${r.updatedAt}) ON CONFLICT (tenant, id) DO UPDATE SET name = excluded.name, position = excluded.position, operation = excluded.operation, resource = excluded.resource, amount_field = excluded.amount_field, above = excluded.above, group_name = excluded.group_name, channel = excluded.channel, escalate_after_ms = excluded.escalate_after_ms, escalation_group = excluded.escalation_group, escalation_channel = excluded.escalation_channel, updated_at = excluded.updated_at`,
  deleteRoute: (tenant: string, id: string): SqlQuery =>
    sql`DELETE FROM countersign_routes WHERE tenant = ${tenant} AND id = ${id}`,
  insertProposalRoute: (r: ProposalRouteRecord): SqlQuery =>
    sql`INSERT INTO countersign_proposal_routes (tenant, proposal_id, route_id, route_name, group_name, channel, escalate_at, escalation_group, escalation_channel, escalated_at) VALUES (${r.tenant}, ${r.proposalId}, ${r.routeId}, ${r.routeName}, ${r.group}, ${r.channel}, ${r.escalateAt}, ${r.escalationGroup}, ${r.escalationChannel}, ${r.escalatedAt})`,
  listProposalRoutes: (tenant: string, ids: readonly string[]): SqlQuery =>
    sql`SELECT * FROM countersign_proposal_routes WHERE tenant = ${tenant} AND proposal_id IN (${sql.list(ids)})`,
  /** Pending proposals whose route's escalation time has come and that are not escalated yet, across tenants. */
  listEscalationDue: (now: number, limit: number): SqlQuery =>
    sql`SELECT r.tenant, r.proposal_id FROM countersign_proposal_routes r JOIN countersign_proposals p ON p.tenant = r.tenant AND p.id = r.proposal_id WHERE r.escalated_at IS NULL AND r.escalate_at <= ${now} AND p.status = 'pending' AND p.expires_at > ${now} ORDER BY r.escalate_at LIMIT ${limit}`,
  /** Compare-and-set: escalates a proposal's route once. */
  markEscalated: (tenant: string, proposalId: string, now: number): SqlQuery =>
    sql`UPDATE countersign_proposal_routes SET escalated_at = ${now} WHERE tenant = ${tenant} AND proposal_id = ${proposalId} AND escalated_at IS NULL`,
  /** Pending proposals expiring in (now, until] without a reminder yet, across tenants. */
  listReminderDue: (now: number, until: number, limit: number): SqlQuery =>
    pendingDueSql({ until, after: now, unreminded: true, limit }),
  /** Records a proposal's reminder; a second inserts nothing (0 changes). */
  insertReminder: (tenant: string, proposalId: string, now: number): SqlQuery =>
    sql`INSERT INTO countersign_reminders (tenant, proposal_id, reminded_at) VALUES (${tenant}, ${proposalId}, ${now}) ON CONFLICT (tenant, proposal_id) DO NOTHING`,
});

const text = (v: unknown): string => String(v);
const textOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A group row as a record. */
export function groupOf(row: Record<string, unknown>): GroupRecord {
  let members: string[] = [];
  try {
    const parsed: unknown = JSON.parse(text(row['members_json']));
    if (Array.isArray(parsed)) members = parsed.filter((m): m is string => typeof m === 'string');
  } catch {
    // A members text that does not parse names nobody: the group's proposals fail closed.
  }
  return {
    tenant: text(row['tenant']),
    name: text(row['name']),
    members,
    createdAt: Number(row['created_at']),
    updatedAt: Number(row['updated_at']),
  };
}

/** A route row as a record. */
export function routeOf(row: Record<string, unknown>): RouteRecord {
  return {
    tenant: text(row['tenant']),
    id: text(row['id']),
    name: text(row['name']),
    position: Number(row['position']),
    operation: text(row['operation']),
    resource: textOrNull(row['resource']),
    amountField: textOrNull(row['amount_field']),
    above: numOrNull(row['above']),
    group: text(row['group_name']),
    channel: textOrNull(row['channel']),
    escalateAfterMs: numOrNull(row['escalate_after_ms']),
    escalationGroup: textOrNull(row['escalation_group']),
    escalationChannel: textOrNull(row['escalation_channel']),
    createdAt: Number(row['created_at']),
    updatedAt: Number(row['updated_at']),
  };
}

/** A proposal route row as a record. */
export function proposalRouteOf(row: Record<string, unknown>): ProposalRouteRecord {
  return {
    tenant: text(row['tenant']),
    proposalId: text(row['proposal_id']),
    routeId: text(row['route_id']),
    routeName: text(row['route_name']),
    group: text(row['group_name']),
    channel: textOrNull(row['channel']),
    escalateAt: numOrNull(row['escalate_at']),
    escalationGroup: textOrNull(row['escalation_group']),
    escalationChannel: textOrNull(row['escalation_channel']),
    escalatedAt: numOrNull(row['escalated_at']),
  };
}
