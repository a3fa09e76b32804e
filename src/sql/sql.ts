/** The SQL dialects the store speaks: how a parameter is written in statement text. */
export type SqlDialect = 'sqlite' | 'postgres';

/** A statement in a dialect's own text, with its parameter values in order. */
export interface RenderedSql {
  readonly text: string;
  readonly values: readonly unknown[];
}

// Compiled text per template strings array, one slot per dialect. A tagged template's strings
// array is the same object on every evaluation of that template, so each statement is compiled
// once per dialect; a statement built from fragments has fresh arrays and is compiled each time.
const compiled = new WeakMap<
  readonly string[],
  { sqlite: string | undefined; postgres: string | undefined }
>();

/**
 * One statement or fragment written once for every backend: the text's parts and the values
 * between them. Values are always parameters; only another {@link SqlQuery} (a fragment) or
 * {@link sql.raw} text becomes statement text.
 */
export class SqlQuery {
  readonly strings: readonly string[];
  readonly values: readonly unknown[];

  constructor(strings: readonly string[], values: readonly unknown[]) {
    this.strings = strings;
    this.values = values;
  }

  /** The statement in `dialect`: `?` placeholders for SQLite, `$1…$n` for PostgreSQL. */
  render(dialect: SqlDialect): RenderedSql {
    const given = this.values;
    for (let i = 0; i < given.length; i++) if (given[i] instanceof SqlQuery) return this.#flattened(dialect);
    return { text: textOf(this.strings, dialect), values: given };
  }

  #flattened(dialect: SqlDialect): RenderedSql {
    const strings: string[] = [''];
    const values: unknown[] = [];
    flatten(this, strings, values);
    return { text: compile(strings, dialect), values };
  }
}

function isFragment(value: unknown): value is SqlQuery {
  return value instanceof SqlQuery;
}

function textOf(strings: readonly string[], dialect: SqlDialect): string {
  let entry = compiled.get(strings);
  if (entry === undefined) {
    entry = { sqlite: undefined, postgres: undefined };
    compiled.set(strings, entry);
  }
  const known = entry[dialect];
  if (known !== undefined) return known;
  const text = compile(strings, dialect);
  entry[dialect] = text;
  return text;
}

// SQLite re-prepares a statement on every run whose `LIMIT` is a bound parameter (its planner
// reads the value, so each new binding expires the plan): 20–30 µs a run here, more than the
// query. A cast hides the value from the planner and keeps the prepared plan.
const SQLITE_LIMIT = /\bLIMIT\s+$/i;

function compile(strings: readonly string[], dialect: SqlDialect): string {
  if (dialect === 'sqlite') {
    let text = strings[0]!;
    for (let i = 1; i < strings.length; i++)
      text += `${SQLITE_LIMIT.test(strings[i - 1]!) ? 'CAST(? AS INTEGER)' : '?'}${strings[i]}`;
    return text;
  }
  let text = strings[0]!;
  for (let i = 1; i < strings.length; i++) text += `$${i}${strings[i]}`;
  return text;
}

// Appends `query` to the text parts and values being built; `strings` always ends with the part
// the next text continues.
function flatten(query: SqlQuery, strings: string[], values: unknown[]): void {
  strings[strings.length - 1] += query.strings[0]!;
  for (let i = 0; i < query.values.length; i++) {
    const value = query.values[i];
    if (isFragment(value)) flatten(value, strings, values);
    else {
      values.push(value);
      strings.push('');
    }
    strings[strings.length - 1] += query.strings[i + 1]!;
  }
}

const EMPTY = new SqlQuery([''], []);

/**
 * Writes a statement once for every SQL backend: interpolated values become parameters (never
 * text), interpolated {@link SqlQuery} fragments are spliced in.
 *
 * @example
 * await tx.local.run(sql`INSERT INTO notes (id, body) VALUES (${id}, ${body})`);
 * const rows = await tx.local.all(sql`SELECT body FROM notes WHERE id = ${id}`);
 */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): SqlQuery {
  return new SqlQuery(strings, values);
}

/**
 * Trusted statement text with no parameters: identifiers and fixed fragments the code itself
 * chose (column lists, sort directions), never a value from a caller.
 */
sql.raw = (text: string): SqlQuery => new SqlQuery([text], []);

/** Fragments joined by `separator` (text): `sql.join([sql\`a = ${1}\`, sql\`b = ${2}\`], ' AND ')`. */
sql.join = (parts: readonly SqlQuery[], separator = ', '): SqlQuery => {
  if (parts.length === 0) return EMPTY;
  const strings = [''];
  for (let i = 1; i < parts.length; i++) strings.push(separator);
  strings.push('');
  return new SqlQuery(strings, parts);
};

/** Values as a parameter list: `IN (${sql.list(ids)})`. */
sql.list = (values: readonly unknown[]): SqlQuery =>
  new SqlQuery(
    values.length === 0 ? [''] : ['', ...Array.from({ length: values.length - 1 }, () => ', '), ''],
    values,
  );

/** The empty fragment. */
sql.empty = EMPTY;

/**
 * A statement with a fixed text and values given per call, compiled once: for statements built
 * from column lists (`INSERT INTO t (a, b, c) VALUES (…)`), written as `head`, the values
 * separated by `, `, and `tail`.
 */
export function valuesStatement(
  head: string,
  count: number,
  tail: string,
): (values: readonly unknown[]) => SqlQuery {
  const strings = Object.freeze([head, ...Array.from({ length: count - 1 }, () => ', '), tail]);
  return (values) => new SqlQuery(strings, values);
}
