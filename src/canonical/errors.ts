/**
 * Base class of every error countersign throws. Errors are for bugs, misuse and I/O; expected
 * outcomes (a denied approval, a stale view) are returned as values, never thrown.
 *
 * `name` is the concrete class name, so logs and `error.name` checks read well.
 *
 * @example
 * try {
 *   canonicalize({ amount: Number.NaN });
 * } catch (error) {
 *   if (error instanceof CountersignError) console.error(error.name, error.message);
 * }
 */
export class CountersignError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The caller used the library wrongly: an invalid option, a seal key that is too short, a
 * malformed digest argument. Fix the calling code; retrying will not help.
 */
export class ConfigurationError extends CountersignError {}

/**
 * Why a value cannot be turned into RFC 8785 canonical JSON. Stable strings, part of the
 * public contract:
 *
 * - `non_finite_number`: `NaN`, `Infinity` or `-Infinity`.
 * - `lone_surrogate`: a string or object key with an unpaired UTF-16 surrogate.
 * - `undefined`, `function`, `symbol`, `bigint`: a value of that JavaScript type.
 * - `unsupported_object`: anything but a plain object or an array (Date, Map, Set, class
 *   instances, boxed primitives, typed arrays), an object with a `toJSON` method, or a plain
 *   object with symbol-keyed, non-enumerable or accessor (getter/setter) own properties.
 * - `sparse_array`: an array with holes.
 * - `cycle`: an object or array that contains itself.
 * - `too_deep`: more nested objects and arrays than `maxDepth`.
 */
export type CanonicalizationErrorCode =
  | 'non_finite_number'
  | 'lone_surrogate'
  | 'undefined'
  | 'function'
  | 'symbol'
  | 'bigint'
  | 'unsupported_object'
  | 'sparse_array'
  | 'cycle'
  | 'too_deep';

/**
 * A value cannot be canonicalized. `code` says why, `path` says where, as a JSON path:
 * `$` is the value itself, `$.customer.email` an object member, `$.lines[2]` an array element and
 * `$["weird key"]` a member whose key is not an identifier.
 *
 * @example
 * try {
 *   canonicalize({ lines: [{ amount: Number.NaN }] });
 * } catch (error) {
 *   // error.code === 'non_finite_number', error.path === '$.lines[0].amount'
 * }
 */
export class CanonicalizationError extends CountersignError {
  /** Why the value was rejected. */
  readonly code: CanonicalizationErrorCode;
  /** Where in the value, as a JSON path (`$.a.b[2]`, `$["weird key"]`). */
  readonly path: string;

  constructor(code: CanonicalizationErrorCode, path: string, detail: string) {
    super(`cannot canonicalize ${shorten(path)}: ${detail} (${code})`);
    this.code = code;
    this.path = path;
  }
}

/** Keeps a message readable when the path is 10 000 levels deep; the `path` field stays whole. */
function shorten(path: string): string {
  return path.length <= 200 ? path : `${path.slice(0, 120)}…${path.slice(-60)}`;
}

/**
 * Why {@link parseJson} rejected a text. Stable strings, part of the public contract:
 *
 * - `syntax`: not RFC 8259 JSON (comments, trailing commas, leading zeros, single quotes,
 *   `NaN`, raw control characters in strings, bad escapes, other whitespace…).
 * - `duplicate_key`: an object names the same key twice.
 * - `too_deep`: more nested objects and arrays than `maxDepth`.
 * - `unsafe_integer`: an integer that a double cannot hold exactly (beyond ±(2^53−1), or written
 *   with a fraction or exponent whose decimal value is not the double it rounds to).
 * - `non_finite_number`: a number that overflows to ±Infinity, such as `1e400`.
 * - `lone_surrogate`: an unpaired UTF-16 surrogate, raw or as a `\uXXXX` escape.
 * - `too_long`: the text is longer than `maxLength`.
 * - `trailing_data`: something other than whitespace follows the value.
 * - `empty`: the text is empty or whitespace only.
 */
export type JsonParseReason =
  | 'syntax'
  | 'duplicate_key'
  | 'too_deep'
  | 'unsafe_integer'
  | 'non_finite_number'
  | 'lone_surrogate'
  | 'too_long'
  | 'trailing_data'
  | 'empty';

/**
 * Untrusted JSON text was rejected by {@link parseJson}. `reason` is a stable code; `position`
 * is the 0-based offset (in UTF-16 code units) where the problem was found, `line` and
 * `column` the same place 1-based (a line ends at LF, CR or CRLF).
 *
 * @example
 * try {
 *   parseJson('{"a":1,"a":2}');
 * } catch (error) {
 *   // error.reason === 'duplicate_key', error.position === 7, error.line === 1, error.column === 8
 * }
 */
export class JsonParseError extends CountersignError {
  /** Why the text was rejected. */
  readonly reason: JsonParseReason;
  /** 0-based offset of the problem in the text, in UTF-16 code units. */
  readonly position: number;
  /** 1-based line of {@link position}. */
  readonly line: number;
  /** 1-based column of {@link position}, in UTF-16 code units. */
  readonly column: number;

  constructor(reason: JsonParseReason, position: number, line: number, column: number, detail: string) {
    super(`invalid JSON (${reason}) at line ${line}, column ${column} (position ${position}): ${detail}`);
    this.reason = reason;
    this.position = position;
    this.line = line;
    this.column = column;
  }
}
