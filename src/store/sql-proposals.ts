import type { ProposalStatus } from './records.js';
import { type SqlQuery, sql } from '../sql/sql.js';
import type { ProposalFilter, ProposalQuery, ProposalSort } from './store.js';

/** The SQL that differs between backends for reading inside the stored preview JSON. */
export interface PreviewSql {
  /** The preview's `title` as text (NULL when it has none). */
  readonly title: string;
  /** The preview's `amount.minor` as a number, or -1 when it is not a number (sorts last). */
  readonly amount: string;
}

/** SQLite's JSON1 functions. */
export const SQLITE_PREVIEW_SQL: PreviewSql = {
  title: "json_extract(preview_json, '$.title')",
  amount:
    "(CASE WHEN json_type(preview_json, '$.amount.minor') IN ('integer', 'real') THEN json_extract(preview_json, '$.amount.minor') ELSE -1 END)",
};

// jsonb cannot hold U+0000, so casting a preview whose canonical JSON escapes one (`\u0000`, text
// a model may well produce) fails the whole statement: one such proposal would break the tenant's
// search and amount sort. The escape becomes U+FFFD first. A title holding the six characters
// `\u0000` literally (stored as `\\u0000`) then searches as `\ufffd`: only search text differs.
const PREVIEW_JSONB = "replace(preview_json, '\\u0000', '\\ufffd')::jsonb";

/** PostgreSQL's jsonb operators (the column is text holding canonical JSON). */
export const POSTGRES_PREVIEW_SQL: PreviewSql = {
  title: `(${PREVIEW_JSONB} ->> 'title')`,
  amount: `(CASE WHEN jsonb_typeof(${PREVIEW_JSONB} #> '{amount,minor}') = 'number' THEN (${PREVIEW_JSONB} #>> '{amount,minor}')::numeric ELSE -1 END)`,
};

/** `text` with LIKE's wildcards (and the escape character itself) made literal under `ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * `pending_tenants`: the tenants with a pending proposal, one index seek each (a loose scan; neither
 * database skips to an index's next distinct value by itself). The sweeps across tenants (expiry,
 * reminders) start from it and read each tenant's pending proposals by (tenant, expires_at), so no
 * index across tenants is written on every proposal for them (version 27).
 */
const PENDING_TENANTS = sql.raw(
  "WITH RECURSIVE pending_tenants (tenant) AS (SELECT MIN(tenant) FROM countersign_proposals WHERE status = 'pending' UNION ALL SELECT (SELECT MIN(p.tenant) FROM countersign_proposals p WHERE p.status = 'pending' AND p.tenant > t.tenant) FROM pending_tenants t WHERE t.tenant IS NOT NULL)",
);

/**
 * The statement listing up to `limit` pending proposals expiring at or before `until` (and after
 * `after`, when given) across tenants, tenant by tenant, in no promised order (sorting them all
 * would read every due proposal before the limit). With `unreminded`, only those without a
 * reminder yet.
 */
export function pendingDueSql(due: {
  readonly until: number;
  readonly after?: number;
  readonly unreminded?: boolean;
  readonly limit: number;
}): SqlQuery {
  const after = due.after === undefined ? sql.raw('') : sql` AND p.expires_at > ${due.after}`;
  const unreminded = due.unreminded
    ? sql.raw(
        ' AND NOT EXISTS (SELECT 1 FROM countersign_reminders m WHERE m.tenant = p.tenant AND m.proposal_id = p.id)',
      )
    : sql.raw('');
  // CROSS JOIN keeps SQLite's join order: the few tenants first, then each one's index range.
  return sql`${PENDING_TENANTS} SELECT p.tenant, p.id FROM pending_tenants t CROSS JOIN countersign_proposals p WHERE p.tenant = t.tenant AND p.status = 'pending' AND p.expires_at <= ${due.until}${after}${unreminded} LIMIT ${due.limit}`;
}

const DIGEST_PREFIX = /^[0-9a-f]{4,64}$/;

/** The predicate of the partial index of recent changes (migration 26), word for word. */
const RECENT_INDEX_PREDICATE = "status <> 'pending' AND status <> 'executing'";

/**
 * Proposals in `statuses` (none pending) changed since `since`, as the branches of a union. Decided
 * ones are read from the partial index of recent changes (version 26), which leaves pending and
 * executing proposals out; executing ones, a few in flight, by status. Each branch names the tenant
 * and repeats the index's predicate word for word, so that each is read from its own index.
 */
function recentBranches(tenant: string, statuses: readonly ProposalStatus[], since: number): SqlQuery[] {
  const decided = statuses.filter((s) => s !== 'executing');
  const branches: SqlQuery[] = [];
  if (decided.length > 0)
    branches.push(
      sql`(tenant = ${tenant} AND status IN (${sql.list(decided)}) AND ${sql.raw(RECENT_INDEX_PREDICATE)} AND updated_at >= ${since})`,
    );
  if (decided.length < statuses.length)
    branches.push(sql`(tenant = ${tenant} AND status = 'executing' AND updated_at >= ${since})`);
  return branches;
}

function statusesOf(filter: ProposalFilter): readonly ProposalStatus[] | undefined {
  return typeof filter.status === 'string' ? [filter.status] : filter.status;
}

/** The statuses and time of `filter` when it asks for recent changes (see {@link recentBranches}). */
function recentOf(
  filter: ProposalFilter,
): { readonly statuses: readonly ProposalStatus[]; readonly since: number } | undefined {
  const statuses = statusesOf(filter);
  const since = filter.updatedSince;
  if (statuses === undefined || since === undefined || statuses.length === 0 || statuses.includes('pending'))
    return undefined;
  return { statuses, since };
}

/**
 * The conditions (joined with AND) of a tenant's proposals matching `filter`; for recent changes,
 * with the union's branches joined by OR, or only the branch numbered `branch`.
 */
function whereOf(tenant: string, filter: ProposalFilter, preview: PreviewSql, branch?: number): SqlQuery[] {
  const recent = recentOf(filter);
  const where: SqlQuery[] = [];
  if (recent) {
    // Recent changes name the tenant in each branch instead: a term on the tenant alone would have
    // SQLite read the tenant's every proposal by creation.
    const branches = recentBranches(tenant, recent.statuses, recent.since);
    where.push(branch === undefined ? sql`(${sql.join(branches, ' OR ')})` : branches[branch]!);
  } else {
    where.push(sql`tenant = ${tenant}`);
    const statuses = statusesOf(filter);
    if (statuses !== undefined)
      where.push(statuses.length === 0 ? sql.raw('1 = 0') : sql`status IN (${sql.list(statuses)})`);
    if (filter.updatedSince !== undefined) where.push(sql`updated_at >= ${filter.updatedSince}`);
  }
  if (filter.runId !== undefined) where.push(sql`run_id = ${filter.runId}`);
  if (filter.operation !== undefined) where.push(sql`operation = ${filter.operation}`);
  if (filter.requestedBy !== undefined) where.push(sql`requested_by = ${filter.requestedBy}`);
  if (filter.resource !== undefined) where.push(sql`resource = ${filter.resource}`);
  if (filter.scopeDigest !== undefined) where.push(sql`scope_digest = ${filter.scopeDigest}`);
  if (filter.exceptId !== undefined) where.push(sql`id <> ${filter.exceptId}`);
  const search = filter.search?.trim();
  if (search) {
    const title = sql.raw(preview.title);
    const any = [
      sql`id = ${search}`,
      sql`lower(${title}) LIKE ${`%${escapeLike(search.toLowerCase())}%`} ESCAPE '\\'`,
    ];
    const hex = search.toLowerCase();
    if (DIGEST_PREFIX.test(hex)) any.push(sql`digest LIKE ${`${hex}%`} ESCAPE '\\'`);
    where.push(sql`(${sql.join(any, ' OR ')})`);
  }
  return where;
}

/** The sort key expression and direction of each order. */
function orderOf(sort: ProposalSort, preview: PreviewSql): { key: string; dir: 'ASC' | 'DESC' } {
  switch (sort) {
    case 'expires':
      return { key: 'expires_at', dir: 'ASC' };
    case 'amount':
      return { key: preview.amount, dir: 'DESC' };
    default:
      return { key: 'created_at', dir: 'DESC' };
  }
}

/**
 * The statement listing a tenant's proposals. Every value the caller gave is a parameter; only
 * fixed fragments are SQL text.
 */
export function listProposalsSql(tenant: string, query: ProposalQuery, preview: PreviewSql): SqlQuery {
  const where = whereOf(tenant, query, preview);
  const sort = query.sort ?? 'created';
  const ordered = orderOf(sort, preview);
  const { key } = ordered;
  // `since` reads forwards in time: oldest first from a position (only with the created order).
  const dir = query.since && sort === 'created' ? 'ASC' : ordered.dir;
  if (query.since && sort === 'created') {
    const { createdAt, id } = query.since;
    where.push(sql`(created_at > ${createdAt} OR (created_at = ${createdAt} AND id > ${id}))`);
  }
  if (query.before) {
    const { createdAt, id } = query.before;
    where.push(sql`(created_at < ${createdAt} OR (created_at = ${createdAt} AND id < ${id}))`);
  }
  const k = sql.raw(key);
  if (query.after) {
    const beyond = sql.raw(dir === 'ASC' ? '>' : '<');
    const after = query.after;
    where.push(sql`(${k} ${beyond} ${after.key} OR (${k} = ${after.key} AND id ${beyond} ${after.id}))`);
  }
  const d = sql.raw(dir);
  return sql`SELECT * FROM countersign_proposals WHERE ${sql.join(where, ' AND ')} ORDER BY ${k} ${d}, id ${d} LIMIT ${query.limit}`;
}

/** The statement counting a tenant's proposals matching `filter` (one row, column `n`). */
export function countMatchingSql(tenant: string, filter: ProposalFilter, preview: PreviewSql): SqlQuery {
  const recent = recentOf(filter);
  const where = (branch?: number) => sql.join(whereOf(tenant, filter, preview, branch), ' AND ');
  if (!recent) return sql`SELECT COUNT(*) AS n FROM countersign_proposals WHERE ${where()}`;
  // Branch by branch, each from its own index alone: counting the union read every row it matched.
  const branches = recentBranches(tenant, recent.statuses, recent.since).map(
    (_, i) => sql`(SELECT COUNT(*) FROM countersign_proposals WHERE ${where(i)})`,
  );
  return sql`SELECT ${sql.join(branches, ' + ')} AS n`;
}
