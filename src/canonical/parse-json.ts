import { checkMaxDepth, DEFAULT_MAX_DEPTH } from './canonicalize.js';
import { ConfigurationError, JsonParseError, type JsonParseReason } from './errors.js';

// Written by hand rather than with JSON.parse: JSON.parse keeps the last of duplicate keys,
// accepts lone surrogates, rounds 9007199254740993 to ...992 without a word, turns 1e400 into
// Infinity and recurses on nesting. Each of those lets an attacker make the text a human
// reviewed and the value the application executes differ.

/** A JSON value as {@link parseJson} returns it. */
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A JSON object as {@link parseJson} returns it: every key an own data property. */
export interface JsonObject {
  [key: string]: JsonValue;
}

/** Default longest text {@link parseJson} accepts: 16 MiB of UTF-16 code units. */
export const DEFAULT_MAX_LENGTH = 16 * 1024 * 1024;

/** Options of {@link parseJson}. */
export interface ParseJsonOptions {
  /**
   * Most objects and arrays nested inside one another (the outermost counts as 1), default
   * {@link DEFAULT_MAX_DEPTH} (256). The parser is iterative, so any limit is safe.
   */
  readonly maxDepth?: number;
  /**
   * Longest text accepted, in UTF-16 code units (`text.length`), default
   * {@link DEFAULT_MAX_LENGTH} (16 MiB). `Infinity` for no limit.
   */
  readonly maxLength?: number;
}

/**
 * Parses untrusted JSON text strictly: exactly the RFC 8259 grammar, plus the I-JSON
 * (RFC 7493) rules that keep one text from meaning two values. Rejects, with a
 * {@link JsonParseError} naming the `reason`, `position`, `line` and `column`:
 *
 * - anything outside the grammar (`syntax`): comments, trailing commas, leading zeros, `NaN`,
 *   single quotes, raw control characters in strings, whitespace other than space, tab, LF, CR;
 * - duplicate keys in one object (`duplicate_key`);
 * - nesting deeper than `maxDepth` (`too_deep`), without ever growing the call stack;
 * - numbers a double cannot hold exactly: integers beyond ±(2^53−1) (`unsafe_integer`),
 *   including those written with a fraction or exponent unless the decimal value is exactly the
 *   double (`9007199254740992.0` passes, `9007199254740993.0` and `1e23` do not), and numbers
 *   that overflow to ±Infinity (`non_finite_number`);
 * - unpaired UTF-16 surrogates, raw or escaped (`lone_surrogate`);
 * - a text longer than `maxLength` (`too_long`), data after the value (`trailing_data`), and an
 *   empty or whitespace-only text (`empty`).
 *
 * `canonicalize` writes any finite double, so the canonical text of a value holding, say,
 * `2 ** 60` or `1e30` is refused here as `unsafe_integer`: keep amounts as safe integers
 * (minor units), or decimal strings.
 *
 * Objects in the result are plain objects (prototype `Object.prototype`) whose members are
 * all own, enumerable, writable data properties. Every key that `Object.prototype` has
 * (`__proto__`, `constructor`, `toString`…, and anything a polluter added) is created with
 * `Object.defineProperty`, never by assignment, so parsing never calls a setter or changes a
 * prototype, and `{"__proto__": …}` comes back as data.
 *
 * @throws {JsonParseError} when the text is rejected.
 * @throws {ConfigurationError} when an option is invalid.
 *
 * @example
 * parseJson('{"amount_minor": 4000, "currency": "USD"}'); // { amount_minor: 4000, currency: 'USD' }
 *
 * @example
 * parseJson('{"a": 1, "a": 2}');
 * // throws JsonParseError: invalid JSON (duplicate_key) at line 1, column 10 (position 9): …
 */
export function parseJson(text: string, options?: ParseJsonOptions): JsonValue {
  return parse(text, options, false);
}

/**
 * Parses the output of `canonicalize` back, freezing every object and array as it is
 * completed, so that {@link freeze} takes one pass. The text is trusted to be canonical: its
 * numbers are the shortest round-trip form of doubles, so every one is taken as the double it
 * names, even beyond ±(2^53−1), where {@link parseJson} would refuse an untrusted `1e+30`.
 *
 * @internal
 */
export function parseCanonicalFrozen(text: string, options?: ParseJsonOptions): JsonValue {
  return parse(text, options, true);
}

function parse(text: string, options: ParseJsonOptions | undefined, trusted: boolean): JsonValue {
  if (typeof text !== 'string') throw new ConfigurationError('parseJson expects a string');
  const maxDepth = options?.maxDepth === undefined ? DEFAULT_MAX_DEPTH : checkMaxDepth(options.maxDepth);
  const maxLength = options?.maxLength === undefined ? DEFAULT_MAX_LENGTH : checkMaxLength(options.maxLength);
  if (text.length > maxLength) {
    throw error(
      text,
      'too_long',
      maxLength,
      `the text has ${text.length} characters, more than ${maxLength}`,
    );
  }
  return new Parser(text, maxDepth, trusted).parse();
}

function checkMaxLength(maxLength: number): number {
  if (maxLength === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxLength) && maxLength >= 0)) {
    return maxLength;
  }
  throw new ConfigurationError(
    `maxLength must be a non-negative integer or Infinity, got ${String(maxLength)}`,
  );
}

const defineProperty = Object.defineProperty;
const freezeObject = Object.freeze;
const hasOwn = Object.hasOwn;

const objectPrototype = Object.prototype;

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

class Parser {
  readonly #text: string;
  readonly #maxDepth: number;
  /** Canonical text from canonicalize: freeze containers, take large numbers as written. */
  readonly #trusted: boolean;
  #pos = 0;

  constructor(text: string, maxDepth: number, trusted: boolean) {
    this.#text = text;
    this.#maxDepth = maxDepth;
    this.#trusted = trusted;
  }

  parse(): JsonValue {
    const text = this.#text;
    const length = text.length;
    // One frame per open container. For an object, `keys[top]` is the key whose value is
    // being parsed; for an array it is null.
    const containers: (JsonValue[] | JsonObject)[] = [];
    const keys: (string | null)[] = [];
    let top = -1;
    let value: JsonValue;

    this.#skipWhitespace();
    if (this.#pos >= length) throw this.#fail('empty', this.#pos, 'the text holds no JSON value');

    for (;;) {
      // Parse one value; a non-empty container opens a frame and loops for its first member.
      const start = this.#pos;
      const c = text.charCodeAt(start);
      if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
        if (top + 1 >= this.#maxDepth) {
          throw this.#fail(
            'too_deep',
            start,
            `more than ${this.#maxDepth} nested objects and arrays (maxDepth)`,
          );
        }
        this.#pos++;
        this.#skipWhitespace();
        if (c === 0x5b) {
          const array: JsonValue[] = [];
          if (text.charCodeAt(this.#pos) === 0x5d /* ] */) {
            this.#pos++;
            value = this.#close(array);
          } else {
            containers[++top] = array;
            keys[top] = null;
            continue;
          }
        } else {
          const object: JsonObject = {};
          if (text.charCodeAt(this.#pos) === 0x7d /* } */) {
            this.#pos++;
            value = this.#close(object);
          } else {
            containers[++top] = object;
            keys[top] = this.#key(object);
            continue;
          }
        }
      } else if (c === 0x22 /* " */) {
        value = this.#string();
      } else if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) {
        value = this.#number();
      } else if (c === 0x74 /* t */ && text.startsWith('true', start)) {
        this.#pos += 4;
        value = true;
      } else if (c === 0x66 /* f */ && text.startsWith('false', start)) {
        this.#pos += 5;
        value = false;
      } else if (c === 0x6e /* n */ && text.startsWith('null', start)) {
        this.#pos += 4;
        value = null;
      } else {
        throw this.#unexpected(start, 'a JSON value');
      }

      // Attach the value to its container; close every container that ends here.
      for (;;) {
        this.#skipWhitespace();
        if (top < 0) {
          if (this.#pos < length) {
            throw this.#fail('trailing_data', this.#pos, 'only whitespace may follow the JSON value');
          }
          return value;
        }
        const container = containers[top]!;
        const key = keys[top] as string | null;
        const next = text.charCodeAt(this.#pos);
        if (key === null) {
          (container as JsonValue[]).push(value);
          if (next === 0x2c /* , */) {
            this.#pos++;
            this.#skipWhitespace();
            break;
          }
          if (next !== 0x5d /* ] */) throw this.#unexpected(this.#pos, "',' or ']' after an array element");
        } else {
          if (key in objectPrototype) {
            // `__proto__`, `constructor`, `toString`… or anything a polluter added: assignment
            // could call a setter, so define the member as an own data property.
            defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
          } else {
            // Nothing of that name on the prototype chain of a fresh object: assignment
            // creates exactly the same own data property, faster.
            (container as JsonObject)[key] = value;
          }
          if (next === 0x2c /* , */) {
            this.#pos++;
            this.#skipWhitespace();
            keys[top] = this.#key(container as JsonObject);
            break;
          }
          if (next !== 0x7d /* } */) throw this.#unexpected(this.#pos, "',' or '}' after an object member");
        }
        this.#pos++;
        value = this.#close(container);
        top--;
      }
    }
  }

  #close<T extends JsonValue[] | JsonObject>(container: T): T {
    return this.#trusted ? freezeObject(container) : container;
  }

  /** Parses `"key"` and the colon after it; refuses a key the object already has. */
  #key(object: JsonObject): string {
    const start = this.#pos;
    if (this.#text.charCodeAt(start) !== 0x22 /* " */) throw this.#unexpected(start, 'a string key');
    const key = this.#string();
    if (hasOwn(object, key))
      throw this.#fail('duplicate_key', start, `the key ${JSON.stringify(key)} appears twice`);
    this.#skipWhitespace();
    if (this.#text.charCodeAt(this.#pos) !== 0x3a /* : */)
      throw this.#unexpected(this.#pos, "':' after a key");
    this.#pos++;
    this.#skipWhitespace();
    return key;
  }

  #skipWhitespace(): void {
    const text = this.#text;
    let pos = this.#pos;
    for (;;) {
      const c = text.charCodeAt(pos);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      pos++;
    }
    this.#pos = pos;
  }

  /** Parses a string starting at its opening quote. */
  #string(): string {
    const text = this.#text;
    const length = text.length;
    const start = this.#pos + 1;
    // Fast path: no escapes, no control characters, no surrogates.
    let pos = start;
    for (; pos < length; pos++) {
      const c = text.charCodeAt(pos);
      if (c === 0x22) {
        this.#pos = pos + 1;
        return text.slice(start, pos);
      }
      if (c < 0x20 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) break;
    }
    return this.#escapedString(start, pos);
  }

  /** The slow path of {@link #string}: decodes escapes and checks surrogate pairs. */
  #escapedString(start: number, from: number): string {
    const text = this.#text;
    const length = text.length;
    let out = '';
    let chunk = start;
    let pos = from;
    // Position of a high surrogate (raw or escaped) still waiting for its low half, or -1.
    let pendingHigh = -1;
    for (;;) {
      if (pos >= length)
        throw this.#fail('syntax', pos, `the string opened at position ${start - 1} is not closed`);
      const at = pos;
      let c = text.charCodeAt(pos);
      if (c === 0x22 /* " */) {
        if (pendingHigh >= 0) throw this.#loneSurrogate(pendingHigh);
        this.#pos = pos + 1;
        return out + text.slice(chunk, pos);
      }
      if (c < 0x20) {
        throw this.#fail('syntax', pos, `raw control character U+${hex4(c)} in a string (escape it)`);
      }
      if (c === 0x5c /* \ */) {
        out += text.slice(chunk, pos);
        const e = text.charCodeAt(pos + 1);
        if (e === 0x75 /* u */) {
          c = 0;
          for (let k = pos + 2; k < pos + 6; k++) {
            const digit = hexValue(text.charCodeAt(k));
            if (digit < 0) throw this.#fail('syntax', pos, 'a \\u escape needs four hex digits');
            c = (c << 4) | digit;
          }
          pos += 6;
          out += String.fromCharCode(c);
        } else {
          const simple = simpleEscape(e);
          if (simple === undefined) throw this.#fail('syntax', pos, 'invalid escape sequence');
          pos += 2;
          out += simple;
        }
        chunk = pos;
      } else {
        pos++;
      }
      // Whatever the spelling, raw or escaped, the decoded string must pair every surrogate.
      if (c >= 0xdc00 && c <= 0xdfff) {
        if (pendingHigh < 0) throw this.#loneSurrogate(at);
        pendingHigh = -1;
      } else if (pendingHigh >= 0) {
        throw this.#loneSurrogate(pendingHigh);
      } else if (c >= 0xd800 && c <= 0xdbff) {
        pendingHigh = at;
      }
    }
  }

  #loneSurrogate(position: number): JsonParseError {
    return this.#fail('lone_surrogate', position, 'a UTF-16 surrogate without its other half');
  }

  /** Parses a number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
  #number(): number {
    const text = this.#text;
    const start = this.#pos;
    let pos = start;
    if (text.charCodeAt(pos) === 0x2d /* - */) pos++;
    const first = text.charCodeAt(pos);
    if (first === 0x30 /* 0 */) {
      pos++;
      if (isDigit(text.charCodeAt(pos)))
        throw this.#fail('syntax', start, 'a number may not have leading zeros');
    } else if (isDigit(first)) {
      pos = skipDigits(text, pos + 1);
    } else {
      throw this.#unexpected(pos, 'a digit');
    }
    let integer = true;
    if (text.charCodeAt(pos) === 0x2e /* . */) {
      integer = false;
      if (!isDigit(text.charCodeAt(pos + 1))) throw this.#unexpected(pos + 1, "a digit after '.'");
      pos = skipDigits(text, pos + 2);
    }
    const e = text.charCodeAt(pos);
    if (e === 0x65 /* e */ || e === 0x45 /* E */) {
      integer = false;
      pos++;
      const sign = text.charCodeAt(pos);
      if (sign === 0x2b /* + */ || sign === 0x2d /* - */) pos++;
      if (!isDigit(text.charCodeAt(pos))) throw this.#unexpected(pos, 'a digit in the exponent');
      pos = skipDigits(text, pos + 1);
    }
    this.#pos = pos;
    const lexeme = text.slice(start, pos);
    // Number() rounds a decimal string correctly, so `value` is the nearest double.
    const value = Number(lexeme);
    if (value === Number.POSITIVE_INFINITY || value === Number.NEGATIVE_INFINITY) {
      throw this.#fail('non_finite_number', start, `${lexeme} overflows to ${String(value)}`);
    }
    if ((value > MAX_SAFE || value < -MAX_SAFE) && !this.#trusted) {
      // Every double this large is an integer. Written as one, it is refused outright; written
      // with a fraction or exponent, it passes only if the decimal is exactly that double.
      if (integer || !exactlyDouble(lexeme, value)) {
        throw this.#fail(
          'unsafe_integer',
          start,
          `${lexeme} is not exactly representable (integers are safe up to ±${MAX_SAFE})`,
        );
      }
    }
    return value;
  }

  #unexpected(position: number, expected: string): JsonParseError {
    const text = this.#text;
    if (position >= text.length)
      return this.#fail('syntax', position, `expected ${expected}, found the end of the text`);
    const c = text.charCodeAt(position);
    if (c >= 0xd800 && c <= 0xdfff && !isPairAt(text, position)) return this.#loneSurrogate(position);
    const found = c >= 0x20 && c < 0x7f ? `'${text[position]}'` : `U+${hex4(c)}`;
    return this.#fail('syntax', position, `expected ${expected}, found ${found}`);
  }

  #fail(reason: JsonParseReason, position: number, detail: string): JsonParseError {
    return error(this.#text, reason, position, detail);
  }
}

function error(text: string, reason: JsonParseReason, position: number, detail: string): JsonParseError {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(position, text.length);
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x0a || (c === 0x0d && text.charCodeAt(i + 1) !== 0x0a)) {
      line++;
      lineStart = i + 1;
    }
  }
  return new JsonParseError(reason, position, line, position - lineStart + 1, detail);
}

/** The character a one-letter escape (`\n`, `\"`…) stands for, by the code after the backslash. */
function simpleEscape(c: number): string | undefined {
  switch (c) {
    case 0x22:
      return '"';
    case 0x5c:
      return '\\';
    case 0x2f:
      return '/';
    case 0x62:
      return '\b';
    case 0x66:
      return '\f';
    case 0x6e:
      return '\n';
    case 0x72:
      return '\r';
    case 0x74:
      return '\t';
    default:
      return undefined;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function skipDigits(text: string, pos: number): number {
  while (isDigit(text.charCodeAt(pos))) pos++;
  return pos;
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

function hex4(c: number): string {
  return c.toString(16).toUpperCase().padStart(4, '0');
}

function isPairAt(text: string, position: number): boolean {
  const c = text.charCodeAt(position);
  if (c <= 0xdbff) {
    const next = text.charCodeAt(position + 1);
    return next >= 0xdc00 && next <= 0xdfff;
  }
  const previous = text.charCodeAt(position - 1);
  return previous >= 0xd800 && previous <= 0xdbff;
}

/**
 * Whether a number lexeme (with a fraction or an exponent) is exactly the integer double it
 * rounds to, decided with BigInt arithmetic on its decimal digits.
 */
function exactlyDouble(lexeme: string, value: number): boolean {
  const match = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(lexeme);
  if (match === null) return false;
  const fraction = match[2] ?? '';
  let digits = (match[1]! + fraction).replace(/^0+/, '');
  let exponent = Number(match[3] ?? '0') - fraction.length;
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  // With no trailing zeros left, a negative exponent leaves a fraction: not an integer. A
  // finite double has at most 309 integer digits, so longer decimals cannot match either
  // (and never reach the BigInt arithmetic below, whatever the text's length).
  if (digits === '' || exponent < 0 || digits.length + exponent > 309) return false;
  return BigInt(digits) * 10n ** BigInt(exponent) === BigInt(Math.abs(value));
}
