import type { ProposalStatus } from './records.js';
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

/** PostgreSQL's jsonb operators (the column is text holding canonical JSON). */
export const POSTGRES_PREVIEW_SQL: PreviewSql = {
  title: "(preview_json::jsonb ->> 'title')",
  amount:
    "(CASE WHEN jsonb_typeof(preview_json::jsonb #> '{amount,minor}') = 'number' THEN (preview_json::jsonb #>> '{amount,minor}')::numeric ELSE -1 END)",
};

/** `text` with LIKE's wildcards (and the escape character itself) made literal under `ESCAPE '\'`. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

const DIGEST_PREFIX = /^[0-9a-f]{4,64}$/;

/** The WHERE clause (with `?` placeholders) of a tenant's proposals matching `filter`. */
function whereOf(tenant: string, filter: ProposalFilter, preview: PreviewSql): [string[], unknown[]] {
  const where = ['tenant = ?'];
  const params: unknown[] = [tenant];
  if (filter.status !== undefined) {
    const statuses: readonly ProposalStatus[] =
      typeof filter.status === 'string' ? [filter.status] : filter.status;
    if (statuses.length === 0) where.push('1 = 0');
    else {
      where.push(`status IN (${statuses.map(() => '?').join(', ')})`);
      params.push(...statuses);
    }
  }
  if (filter.runId !== undefined) {
    where.push('run_id = ?');
    params.push(filter.runId);
  }
  if (filter.operation !== undefined) {
    where.push('operation = ?');
    params.push(filter.operation);
  }
  if (filter.requestedBy !== undefined) {
    where.push('requested_by = ?');
    params.push(filter.requestedBy);
  }
  if (filter.updatedSince !== undefined) {
    where.push('updated_at >= ?');
    params.push(filter.updatedSince);
  }
  if (filter.resource !== undefined) {
    where.push('resource = ?');
    params.push(filter.resource);
  }
  if (filter.scopeDigest !== undefined) {
    where.push('scope_digest = ?');
    params.push(filter.scopeDigest);
  }
  if (filter.exceptId !== undefined) {
    where.push('id <> ?');
    params.push(filter.exceptId);
  }
  const search = filter.search?.trim();
  if (search) {
    const any = ['id = ?', `lower(${preview.title}) LIKE ? ESCAPE '\\'`];
    params.push(search, `%${escapeLike(search.toLowerCase())}%`);
    const hex = search.toLowerCase();
    if (DIGEST_PREFIX.test(hex)) {
      any.push("digest LIKE ? ESCAPE '\\'");
      params.push(`${hex}%`);
    }
    where.push(`(${any.join(' OR ')})`);
  }
  return [where, params];
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
 * The statement listing a tenant's proposals (`?` placeholders; the PostgreSQL store numbers
 * them). Every value the caller gave is a parameter; only fixed fragments are SQL text.
 */
export function listProposalsSql(
  tenant: string,
  query: ProposalQuery,
  preview: PreviewSql,
): [string, unknown[]] {
  const [where, params] = whereOf(tenant, query, preview);
  const sort = query.sort ?? 'created';
  const ordered = orderOf(sort, preview);
  const { key } = ordered;
  // `since` reads forwards in time: oldest first from a position (only with the created order).
  const dir = query.since && sort === 'created' ? 'ASC' : ordered.dir;
  if (query.since && sort === 'created') {
    where.push('(created_at > ? OR (created_at = ? AND id > ?))');
    params.push(query.since.createdAt, query.since.createdAt, query.since.id);
  }
  if (query.before) {
    where.push('(created_at < ? OR (created_at = ? AND id < ?))');
    params.push(query.before.createdAt, query.before.createdAt, query.before.id);
  }
  if (query.after) {
    const beyond = dir === 'ASC' ? '>' : '<';
    where.push(`(${key} ${beyond} ? OR (${key} = ? AND id ${beyond} ?))`);
    params.push(query.after.key, query.after.key, query.after.id);
  }
  const sql = `SELECT * FROM countersign_proposals WHERE ${where.join(' AND ')} ORDER BY ${key} ${dir}, id ${dir} LIMIT ?`;
  return [sql, [...params, query.limit]];
}

/** The statement counting a tenant's proposals matching `filter` (one row, column `n`). */
export function countMatchingSql(
  tenant: string,
  filter: ProposalFilter,
  preview: PreviewSql,
): [string, unknown[]] {
  const [where, params] = whereOf(tenant, filter, preview);
  return [`SELECT COUNT(*) AS n FROM countersign_proposals WHERE ${where.join(' AND ')}`, params];
}
