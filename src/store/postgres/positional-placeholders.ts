const IDENTIFIER_CHAR = /[A-Za-z0-9_$]/;
const DOLLAR_TAG = /^\$(?:[A-Za-z_][A-Za-z0-9_]*)?\$/;
const cache = new Map<string, string>();
const CACHE_LIMIT = 512;

/**
 * Rewrites SQLite-style `?` placeholders to PostgreSQL's `$1…$n`, so portable SQL written for the
 * SQLite store (a local effect's `INSERT … VALUES (?, ?)`) runs unchanged. A `?` inside a string
 * literal (`'…'`, `E'…'`), a quoted identifier, a dollar-quoted body or a comment is left alone.
 * Text without `?` is returned as is, so `$1`-style SQL works too.
 *
 * @example
 * toPositional("INSERT INTO notes (id, body) VALUES (?, 'what?')"); // "… VALUES ($1, 'what?')"
 */
export function toPositional(sql: string): string {
  if (!sql.includes('?')) return sql;
  const known = cache.get(sql);
  if (known !== undefined) return known;
  const out = rewrite(sql);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(sql, out);
  return out;
}

function rewrite(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    const next = sql[i + 1];
    let end: number;
    if (c === "'") {
      const prev = sql[i - 1];
      const escaped = (prev === 'E' || prev === 'e') && !IDENTIFIER_CHAR.test(sql[i - 2] ?? ' ');
      end = quotedEnd(sql, i, "'", escaped);
    } else if (c === '"') {
      end = quotedEnd(sql, i, '"', false);
    } else if (c === '-' && next === '-') {
      const newline = sql.indexOf('\n', i);
      end = newline === -1 ? sql.length : newline;
    } else if (c === '/' && next === '*') {
      end = blockCommentEnd(sql, i);
    } else if (
      c === '$' &&
      !IDENTIFIER_CHAR.test(sql[i - 1] ?? ' ') &&
      DOLLAR_TAG.test(sql.slice(i, i + 65))
    ) {
      const tag = DOLLAR_TAG.exec(sql.slice(i, i + 65))![0];
      const close = sql.indexOf(tag, i + tag.length);
      end = close === -1 ? sql.length : close + tag.length;
    } else if (c === '?') {
      out += `$${++n}`;
      i++;
      continue;
    } else {
      out += c;
      i++;
      continue;
    }
    out += sql.slice(i, end);
    i = end;
  }
  return out;
}

/** The index just past a quoted run starting at `start`; a doubled quote stays inside. */
function quotedEnd(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i];
    if (backslashEscapes && c === '\\') {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}

/** PostgreSQL block comments nest. */
function blockCommentEnd(sql: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < sql.length) {
    if (sql[i] === '/' && sql[i + 1] === '*') {
      depth++;
      i += 2;
    } else if (sql[i] === '*' && sql[i + 1] === '/') {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return sql.length;
}
