import { describe, expect, it } from 'vitest';
import { sql, valuesStatement } from '../../src/sql/sql.js';

describe('the sql tag', () => {
  it('makes every interpolated value a parameter, numbered for PostgreSQL and ? for SQLite', () => {
    const name = "Robert'); DROP TABLE students; --";
    const query = sql`SELECT * FROM t WHERE a = ${name} AND b = ${2}`;
    expect(query.render('sqlite')).toEqual({
      text: 'SELECT * FROM t WHERE a = ? AND b = ?',
      values: [name, 2],
    });
    expect(query.render('postgres')).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b = $2',
      values: [name, 2],
    });
  });

  it('leaves question marks and dollar signs of the text alone: only values are placeholders', () => {
    const query = sql`SELECT 'what?', $tag$ ? $tag$, ${'x'}`;
    expect(query.render('postgres').text).toBe("SELECT 'what?', $tag$ ? $tag$, $1");
    expect(query.render('sqlite').text).toBe("SELECT 'what?', $tag$ ? $tag$, ?");
  });

  it('splices fragments, joins and lists, numbering parameters across them in order', () => {
    const where = [sql`a = ${1}`, sql`b IN (${sql.list(['x', 'y'])})`, sql.raw('c IS NULL')];
    const query = sql`SELECT * FROM t WHERE ${sql.join(where, ' AND ')} LIMIT ${10}`;
    expect(query.render('postgres')).toEqual({
      text: 'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3) AND c IS NULL LIMIT $4',
      values: [1, 'x', 'y', 10],
    });
    expect(query.render('sqlite').text).toBe(
      'SELECT * FROM t WHERE a = ? AND b IN (?, ?) AND c IS NULL LIMIT CAST(? AS INTEGER)',
    );
  });

  it('casts a SQLite LIMIT parameter (a bound LIMIT re-prepares the statement on every run), and only that one', () => {
    const query = sql`SELECT * FROM t WHERE n > ${1} ORDER BY n limit
${5}`;
    expect(query.render('sqlite')).toEqual({
      text: 'SELECT * FROM t WHERE n > ? ORDER BY n limit\nCAST(? AS INTEGER)',
      values: [1, 5],
    });
    expect(sql`SELECT * FROM t WHERE unlimited = ${1}`.render('sqlite').text).toBe(
      'SELECT * FROM t WHERE unlimited = ?',
    );
    expect(query.render('postgres').text).toBe('SELECT * FROM t WHERE n > $1 ORDER BY n limit\n$2');
  });

  it('a fragment used twice contributes its values twice', () => {
    const scope = sql`tenant = ${'acme'}`;
    expect(
      sql`SELECT (SELECT 1 WHERE ${scope}), (SELECT 2 WHERE ${scope} AND n > ${3})`.render('postgres'),
    ).toEqual({
      text: 'SELECT (SELECT 1 WHERE tenant = $1), (SELECT 2 WHERE tenant = $2 AND n > $3)',
      values: ['acme', 'acme', 3],
    });
  });

  it('empty joins, lists and the empty fragment render as no text', () => {
    expect(sql`SELECT 1${sql.empty}`.render('postgres')).toEqual({ text: 'SELECT 1', values: [] });
    expect(sql`x${sql.join([])}y`.render('sqlite')).toEqual({ text: 'xy', values: [] });
    expect(sql`(${sql.list([])})`.render('sqlite')).toEqual({ text: '()', values: [] });
  });

  it('compiles a template once per dialect: the same text object each time', () => {
    const get = (id: string) => sql`SELECT * FROM t WHERE id = ${id}`;
    expect(get('a').render('postgres').text).toBe(get('b').render('postgres').text);
    expect(get('b').render('postgres').values).toEqual(['b']);
  });

  it('valuesStatement: a fixed column list with values given per call', () => {
    const insert = valuesStatement('INSERT INTO t (a, b, c) VALUES (', 3, ')');
    expect(insert([1, null, 'z']).render('postgres')).toEqual({
      text: 'INSERT INTO t (a, b, c) VALUES ($1, $2, $3)',
      values: [1, null, 'z'],
    });
  });
});
