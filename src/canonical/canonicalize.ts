import { CanonicalizationError, type CanonicalizationErrorCode, ConfigurationError } from './errors.js';
import { childPath, indexPath } from './json-path.js';

// Written by hand rather than taken from npm: the packages we reviewed are lax where a digest
// must not be (NaN and Infinity become null, lone surrogates pass, Dates go through toJSON,
// getters run, undefined members vanish). Each of those would let two different values share
// a digest, or one value have two.

/** Nesting limit of {@link canonicalize} and {@link parseJson} when the caller sets none. */
export const DEFAULT_MAX_DEPTH = 256;

/** Options of {@link canonicalize}. */
export interface CanonicalizeOptions {
  /**
   * Most objects and arrays that may be nested inside one another; an outermost object or
   * array counts as level 1, so `0` admits primitives only. An integer from 0 to
   * {@link MAX_DEPTH_LIMIT}, default {@link DEFAULT_MAX_DEPTH} (256).
   */
  readonly maxDepth?: number;
}

// Captured once so that later monkey-patching of the globals cannot change a digest.
const objectPrototype = Object.prototype;
const getPrototypeOf = Object.getPrototypeOf;
const getOwnPropertyNames = Object.getOwnPropertyNames;
const getOwnPropertySymbols = Object.getOwnPropertySymbols;
const getOwnPropertyDescriptor = Object.getOwnPropertyDescriptor;
const isArray = Array.isArray;
const arrayPrototype = Array.prototype;
const stringify = JSON.stringify;
const isWellFormed = (String.prototype as unknown as { isWellFormed(this: string): boolean }).isWellFormed;

/** Whether `text` holds no lone UTF-16 surrogate (`String.prototype.isWellFormed`, not yet in ES2023's types). */
export function isWellFormedText(text: string): boolean {
  return isWellFormed.call(text);
}

/**
 * Largest `maxDepth` a caller may ask for. A cycle is only detected once it reaches the depth
 * limit (which costs nothing on the happy path), so the limit must stay small enough to reach.
 */
export const MAX_DEPTH_LIMIT = 1_000_000;

/**
 * Serializes a value as RFC 8785 (JCS) canonical JSON: object members sorted by the UTF-16
 * code units of their keys, no whitespace, strings escaped as `JSON.stringify` escapes them,
 * numbers written as ECMAScript's Number::toString writes them (`-0` as `0`, `1e21` as
 * `1e+21`, `2.50` as `2.5`). Equal JSON data gives equal text, whatever the key insertion
 * order.
 *
 * Only JSON data is accepted: plain objects (prototype `Object.prototype` or `null`) whose own
 * properties are all enumerable, string-keyed data properties; dense arrays (prototype
 * `Array.prototype`); strings without lone surrogates; finite numbers; booleans; `null`. A
 * `__proto__` own key is ordinary data. Anything else throws a {@link CanonicalizationError}
 * whose `code` says why and whose `path` says where (`$.lines[2].amount`), instead of being
 * dropped or converted: `undefined`, `NaN` and `±Infinity`, functions, symbols, bigints,
 * Dates, Maps, Sets, class instances, objects with `toJSON`, getters and setters,
 * non-enumerable or symbol-keyed properties, sparse arrays, cycles, and nesting deeper than
 * `maxDepth` (default 256).
 *
 * Object getters and `toJSON` are never called: members are read through their property
 * descriptors. Arrays are read by index, like `JSON.stringify` reads them, so named
 * properties added to an array are not part of its JSON. The serializer is iterative: a
 * caller-chosen `maxDepth` of 10 000 or more cannot overflow the call stack.
 *
 * @throws {CanonicalizationError} when the value is not JSON data.
 * @throws {ConfigurationError} when `maxDepth` is not an integer from 0 to
 * {@link MAX_DEPTH_LIMIT}.
 *
 * @example
 * canonicalize({ b: [1, 2.50, -0], a: 'é', c: { z: null, y: true } });
 * // '{"a":"é","b":[1,2.5,0],"c":{"y":true,"z":null}}'
 *
 * @example
 * canonicalize({ when: new Date() });
 * // throws CanonicalizationError: code 'unsupported_object', path '$.when'
 */
export function canonicalize(value: unknown, options?: CanonicalizeOptions): string {
  return serialize(
    value,
    options?.maxDepth === undefined ? DEFAULT_MAX_DEPTH : checkMaxDepth(options.maxDepth),
    undefined,
  );
}

/**
 * Checks a caller-supplied nesting limit, shared by {@link canonicalize} and
 * {@link parseJson}.
 *
 * @internal
 */
export function checkMaxDepth(maxDepth: number): number {
  if (!Number.isInteger(maxDepth) || maxDepth < 0 || maxDepth > MAX_DEPTH_LIMIT) {
    throw new ConfigurationError(
      `maxDepth must be an integer from 0 to ${MAX_DEPTH_LIMIT}, got ${String(maxDepth)}`,
    );
  }
  return maxDepth;
}

const ARRAY_SUBCLASS = 'an array with a prototype other than Array.prototype is not JSON data';
const HIDDEN = 'the member is a getter, a setter or non-enumerable: not a plain data property';
const LONE_SURROGATE_KEY = 'the key contains an unpaired UTF-16 surrogate';

function notPlain(obj: object): string {
  const proto: unknown = getPrototypeOf(obj);
  if (proto !== objectPrototype && proto !== null) return describe('unsupported_object', obj);
  return 'the object has symbol-keyed own properties, which JSON would drop';
}

/**
 * A string as a JSON string literal, or `undefined` when it holds a lone surrogate. Short
 * strings that need no escaping (most keys and values) are checked with a plain loop, which
 * beats a call into `JSON.stringify`; everything else goes through `JSON.stringify`, whose
 * escaping is exactly the one RFC 8785 prescribes for well-formed strings.
 */
function quote(s: string): string | undefined {
  const length = s.length;
  if (length <= SHORT_STRING) {
    let i = 0;
    for (; i < length; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) break;
    }
    if (i === length) return '"' + s + '"';
  }
  return isWellFormed.call(s) ? stringify(s) : undefined;
}

/**
 * A string as its canonical JSON (a JSON string literal), or `undefined` when it holds a lone
 * surrogate: what {@link canonicalize} writes for a string, without its set-up for containers.
 *
 * @internal
 */
export function canonicalString(s: string): string | undefined {
  return quote(s);
}

/** Strings up to this length are scanned in JavaScript before falling back to `JSON.stringify`. */
const SHORT_STRING = 64;

// Payloads repeat the same few keys over and over, so their quoted forms (`"amount_minor":`
// for a first member, `,"amount_minor":` for the others) are kept in small bounded caches: one
// Map lookup instead of a scan and several concatenations. The caches hold only strings
// derived from the key itself, so they cannot change any output.
const KEY_CACHE_SIZE = 4096;
const KEY_CACHE_MAX_LENGTH = 64;
const firstMembers = new Map<string, string>();
const nextMembers = new Map<string, string>();

/**
 * `"key":` (or `,"key":` when `next`) for a well-formed key, or `undefined` when the key
 * holds a lone surrogate.
 */
function member(key: string, next: boolean): string | undefined {
  const cache = next ? nextMembers : firstMembers;
  let text = cache.get(key);
  if (text !== undefined) return text;
  const quoted = quote(key);
  if (quoted === undefined) return undefined;
  text = next ? ',' + quoted + ':' : quoted + ':';
  if (key.length <= KEY_CACHE_MAX_LENGTH) {
    if (cache.size >= KEY_CACHE_SIZE) cache.clear();
    cache.set(key, text);
  }
  return text;
}

/**
 * The own keys of a plain object in canonical order, or `undefined` when the object is not
 * plain JSON data (another prototype, or symbol-keyed own properties). Non-enumerable and
 * accessor properties are among the keys returned; the caller refuses them member by member.
 */
function sortedKeys(obj: object): string[] | undefined {
  const proto: unknown = getPrototypeOf(obj);
  if (proto !== objectPrototype && proto !== null) return undefined;
  if (getOwnPropertySymbols(obj).length !== 0) return undefined;
  const keys = getOwnPropertyNames(obj);
  return keys.length <= INSERTION_SORT_MAX ? insertionSort(keys) : keys.sort();
}

/** Arrays up to this length are sorted in JavaScript, which beats the builtin's set-up cost. */
const INSERTION_SORT_MAX = 24;

/**
 * Sorts strings in place by UTF-16 code units, which is what `<` compares and what RFC 8785
 * asks for (the builtin `sort()` without a comparator orders them the same way).
 */
function insertionSort(keys: string[]): string[] {
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    if (keys[j]! <= key) continue;
    do {
      keys[j + 1] = keys[j]!;
      j--;
    } while (j >= 0 && keys[j]! > key);
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * The canonical JSON of a value as UTF-8 bytes, for hashing: the same text as
 * {@link canonicalize}, written straight into a reused byte buffer, so no string is built,
 * flattened or re-encoded. The result is a view into that buffer, valid only until the next
 * call: hash or copy it at once.
 *
 * @throws {CanonicalizationError} as {@link canonicalize} does.
 * @internal
 */
export function canonicalBytes(value: unknown, options?: CanonicalizeOptions): Uint8Array {
  const maxDepth = options?.maxDepth === undefined ? DEFAULT_MAX_DEPTH : checkMaxDepth(options.maxDepth);
  // A Proxy's traps can call back in here while the shared sink is in use: give them their own.
  const sink = sharedSink.busy ? new ByteSink() : sharedSink;
  sink.busy = true;
  sink.length = 0;
  try {
    serialize(value, maxDepth, sink);
    return sink.bytes.subarray(0, sink.length);
  } finally {
    sink.busy = false;
    sink.shrink();
  }
}

const SINK_INITIAL = 16 * 1024;
/** A buffer grown past this is dropped after use rather than kept for the next call. */
const SINK_KEEP = 4 * 1024 * 1024;

/**
 * A growable UTF-8 output buffer. A Buffer rather than a plain Uint8Array: node:crypto hashes
 * a Buffer view markedly faster. Only the written prefix is ever exposed.
 */
class ByteSink {
  bytes: Buffer = Buffer.allocUnsafeSlow(SINK_INITIAL);
  length = 0;
  busy = false;

  /** Makes room for `more` bytes. */
  reserve(more: number): void {
    const needed = this.length + more;
    if (needed <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < needed) size *= 2;
    const grown = Buffer.allocUnsafeSlow(size);
    this.bytes.copy(grown, 0, 0, this.length);
    this.bytes = grown;
  }

  shrink(): void {
    if (this.bytes.length > SINK_KEEP) this.bytes = Buffer.allocUnsafeSlow(SINK_INITIAL);
  }

  byte(b: number): void {
    if (this.length === this.bytes.length) this.reserve(1);
    this.bytes[this.length++] = b;
  }

  /** Writes a string known to be ASCII (numbers, literals). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < n; i++) bytes[at++] = s.charCodeAt(i);
    this.length = at;
  }

  /** Copies pre-encoded bytes (a cached member key). */
  copy(source: Uint8Array): void {
    const n = source.length;
    this.reserve(n);
    if (n > 32) {
      this.bytes.set(source, this.length);
      this.length += n;
      return;
    }
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < n; i++) bytes[at++] = source[i]!;
    this.length = at;
  }

  /**
   * Writes a string as a JSON string literal in UTF-8, escaped exactly as `JSON.stringify`
   * escapes; `false` (with nothing written) when it holds a lone surrogate.
   */
  string(s: string): boolean {
    const n = s.length;
    // Worst cases: 6 bytes for an escaped control character, 3 for any other code unit.
    this.reserve(n * 6 + 2);
    const bytes = this.bytes;
    const start = this.length;
    let at = start;
    bytes[at++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x80) {
        if (c >= 0x20 && c !== 0x22 && c !== 0x5c) {
          bytes[at++] = c;
          continue;
        }
        bytes[at++] = 0x5c;
        const letter = SHORT_ESCAPES[c]!;
        if (letter !== 0) {
          bytes[at++] = letter;
        } else {
          bytes[at++] = 0x75; // \u00XX, lowercase hex
          bytes[at++] = 0x30;
          bytes[at++] = 0x30;
          bytes[at++] = HEX_DIGITS[c >> 4]!;
          bytes[at++] = HEX_DIGITS[c & 15]!;
        }
      } else if (c < 0x800) {
        bytes[at++] = 0xc0 | (c >> 6);
        bytes[at++] = 0x80 | (c & 0x3f);
      } else if (c < 0xd800 || c > 0xdfff) {
        bytes[at++] = 0xe0 | (c >> 12);
        bytes[at++] = 0x80 | ((c >> 6) & 0x3f);
        bytes[at++] = 0x80 | (c & 0x3f);
      } else {
        const low = s.charCodeAt(i + 1);
        if (c > 0xdbff || !(low >= 0xdc00 && low <= 0xdfff)) {
          this.length = start;
          return false;
        }
        i++;
        const point = ((c - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
        bytes[at++] = 0xf0 | (point >> 18);
        bytes[at++] = 0x80 | ((point >> 12) & 0x3f);
        bytes[at++] = 0x80 | ((point >> 6) & 0x3f);
        bytes[at++] = 0x80 | (point & 0x3f);
      }
    }
    bytes[at++] = 0x22;
    this.length = at;
    return true;
  }
}

const sharedSink = new ByteSink();

/** The letter after the backslash for `"` `\\` and the five short control escapes; 0 for none. */
const SHORT_ESCAPES = new Uint8Array(0x80);
SHORT_ESCAPES[0x22] = 0x22; // \"
SHORT_ESCAPES[0x5c] = 0x5c; // \\
SHORT_ESCAPES[0x08] = 0x62; // \b
SHORT_ESCAPES[0x09] = 0x74; // \t
SHORT_ESCAPES[0x0a] = 0x6e; // \n
SHORT_ESCAPES[0x0c] = 0x66; // \f
SHORT_ESCAPES[0x0d] = 0x72; // \r

const HEX_DIGITS = new Uint8Array([...'0123456789abcdef'].map((c) => c.charCodeAt(0)));

// Member keys as UTF-8 bytes, cached like their string forms above.
const firstMemberBytes = new Map<string, Uint8Array>();
const nextMemberBytes = new Map<string, Uint8Array>();

/** The bytes of {@link member}, or `undefined` for a key with a lone surrogate. */
function memberBytes(key: string, next: boolean): Uint8Array | undefined {
  const cache = next ? nextMemberBytes : firstMemberBytes;
  let bytes = cache.get(key);
  if (bytes !== undefined) return bytes;
  const text = member(key, next);
  if (text === undefined) return undefined;
  bytes = textEncoder.encode(text);
  if (key.length <= KEY_CACHE_MAX_LENGTH) {
    if (cache.size >= KEY_CACHE_SIZE) cache.clear();
    cache.set(key, bytes);
  }
  return bytes;
}

const textEncoder = new TextEncoder();

/**
 * In string mode, output is built by concatenation, which V8 turns into a tree of string
 * pieces (a rope). Past this many characters the rope is flattened and set aside: its pieces
 * then die young, instead of a 2 MB rope of half a million pieces surviving to the end.
 */
const CHUNK_LENGTH = 4096;

/**
 * Writes the canonical JSON of `root` into `sink` (returning '') or, without a sink, returns
 * it as a string. One traversal for both, so the bytes that are hashed and the text that is
 * stored can never disagree.
 */
function serialize(root: unknown, maxDepth: number, sink: ByteSink | undefined): string {
  // One frame per open object or array: the container, its sorted keys (null for an array)
  // and the index of the member being written. Parallel arrays keep the loop allocation-free
  // and the stack depth constant, whatever maxDepth the caller chose.
  const containers: object[] = [];
  const keyLists: (string[] | null)[] = [];
  const positions: number[] = [];
  let top = -1;
  let out = '';
  let chunks: string[] | undefined;
  let value: unknown = root;

  for (;;) {
    // Write `value`. A container opens a frame and its members are written by the loop below.
    switch (typeof value) {
      case 'string': {
        if (sink === undefined) {
          const quoted = quote(value);
          if (quoted === undefined)
            return fail('lone_surrogate', containers, keyLists, positions, top, value);
          out += quoted;
        } else if (!sink.string(value)) {
          return fail('lone_surrogate', containers, keyLists, positions, top, value);
        }
        break;
      }
      case 'number':
        // x - x is 0 for every finite x, NaN for NaN and ±Infinity. '' + -0 is '0'.
        if (value - value !== 0)
          return fail('non_finite_number', containers, keyLists, positions, top, value);
        if (sink === undefined) out += '' + value;
        else sink.ascii('' + value);
        break;
      case 'boolean':
        if (sink === undefined) out += value ? 'true' : 'false';
        else sink.ascii(value ? 'true' : 'false');
        break;
      case 'object': {
        if (value === null) {
          if (sink === undefined) out += 'null';
          else sink.ascii('null');
          break;
        }
        if (top + 1 >= maxDepth) return fail('too_deep', containers, keyLists, positions, top, value);
        if (isArray(value)) {
          if (getPrototypeOf(value) !== arrayPrototype) {
            return fail('unsupported_object', containers, keyLists, positions, top, value, ARRAY_SUBCLASS);
          }
          keyLists[++top] = null;
          if (sink === undefined) out += '[';
          else sink.byte(0x5b);
        } else {
          const keys = sortedKeys(value);
          if (keys === undefined) {
            return fail('unsupported_object', containers, keyLists, positions, top, value, notPlain(value));
          }
          keyLists[++top] = keys;
          if (sink === undefined) out += '{';
          else sink.byte(0x7b);
        }
        containers[top] = value;
        positions[top] = -1;
        break;
      }
      default:
        // 'undefined', 'function', 'symbol' and 'bigint' are error codes of the same name.
        return fail(
          typeof value as 'undefined' | 'function' | 'symbol' | 'bigint',
          containers,
          keyLists,
          positions,
          top,
          value,
        );
    }

    if (out.length > CHUNK_LENGTH) {
      out.charCodeAt(0); // reading a character flattens the rope in V8
      if (chunks === undefined) chunks = [out];
      else chunks.push(out);
      out = '';
    }

    // Find the next member to write, closing every container that is complete.
    for (;;) {
      if (top < 0) return chunks === undefined ? out : chunks.join('') + out;
      const container = containers[top]!;
      const keys = keyLists[top] as string[] | null;
      const position = positions[top]! + 1;
      if (keys === null) {
        const array = container as readonly unknown[];
        if (position < array.length) {
          positions[top] = position;
          value = array[position];
          if (value === undefined && !(position in array)) {
            return fail('sparse_array', containers, keyLists, positions, top, value);
          }
          if (position > 0) {
            if (sink === undefined) out += ',';
            else sink.byte(0x2c);
          }
          break;
        }
        if (sink === undefined) out += ']';
        else sink.byte(0x5d);
      } else if (position < keys.length) {
        positions[top] = position;
        const key = keys[position]!;
        const descriptor = getOwnPropertyDescriptor(container, key);
        // Reading through the descriptor never runs a getter. Every data descriptor has an
        // own `writable`, no accessor descriptor has one.
        if (descriptor === undefined || descriptor.writable === undefined || !descriptor.enumerable) {
          return fail('unsupported_object', containers, keyLists, positions, top, container, HIDDEN);
        }
        value = descriptor.value;
        if (sink === undefined) {
          const text = member(key, position > 0);
          if (text === undefined) {
            return fail('lone_surrogate', containers, keyLists, positions, top, key, LONE_SURROGATE_KEY);
          }
          out += text;
        } else {
          const bytes = memberBytes(key, position > 0);
          if (bytes === undefined) {
            return fail('lone_surrogate', containers, keyLists, positions, top, key, LONE_SURROGATE_KEY);
          }
          sink.copy(bytes);
        }
        break;
      } else if (sink === undefined) {
        out += '}';
      } else {
        sink.byte(0x7d);
      }
      top--;
    }
  }
}

type Frames = {
  readonly containers: readonly object[];
  readonly keyLists: readonly (string[] | null)[];
  readonly positions: readonly number[];
};

/**
 * Throws the error for the value at the current position. Runs only on the error path, so it
 * may allocate freely. A cycle is never looked for on the way down: following one always ends
 * at the depth limit, and only there are the open containers searched for a repeat.
 */
function fail(
  code: CanonicalizationErrorCode,
  containers: readonly object[],
  keyLists: readonly (string[] | null)[],
  positions: readonly number[],
  top: number,
  value: unknown,
  detail?: string,
): never {
  const frames: Frames = { containers, keyLists, positions };
  if (code === 'too_deep') {
    const seen = new Set<unknown>();
    for (let level = 0; level <= top + 1; level++) {
      const node = level <= top ? containers[level] : value;
      if (seen.has(node)) {
        throw new CanonicalizationError(
          'cycle',
          pathOf(frames, level - 1),
          'the value contains itself (a cycle); canonical JSON is a tree',
        );
      }
      seen.add(node);
    }
    throw new CanonicalizationError(
      'too_deep',
      pathOf(frames, top),
      `more than ${top + 1} nested objects and arrays (maxDepth)`,
    );
  }
  if (code === 'function' && top >= 0 && keyLists[top]?.[positions[top]!] === 'toJSON') {
    throw new CanonicalizationError(
      'unsupported_object',
      pathOf(frames, top - 1),
      'an object with a toJSON method is not JSON data; pass the data toJSON would return',
    );
  }
  throw new CanonicalizationError(code, pathOf(frames, top), detail ?? describe(code, value));
}

/** The JSON path of the member the first `top + 1` frames point at (`$` for none). */
function pathOf(frames: Frames, top: number): string {
  let path = '$';
  for (let level = 0; level <= top; level++) {
    const keys = frames.keyLists[level];
    const position = frames.positions[level] ?? 0;
    path = keys ? childPath(path, keys[position] ?? '') : indexPath(path, position);
  }
  return path;
}

function describe(code: CanonicalizationErrorCode, value: unknown): string {
  switch (code) {
    case 'non_finite_number':
      return `${String(value)} is not a finite number`;
    case 'lone_surrogate':
      return 'the string contains an unpaired UTF-16 surrogate';
    case 'undefined':
      return 'undefined is not JSON (leave the member out, or use null)';
    case 'function':
      return 'a function is not JSON';
    case 'symbol':
      return 'a symbol is not JSON';
    case 'bigint':
      return 'a bigint is not JSON (use a safe integer or a decimal string)';
    case 'sparse_array':
      return 'the array has a hole';
    default:
      return `${kindOf(value)} is not a plain object or array`;
  }
}

function kindOf(value: unknown): string {
  if (typeof value !== 'object' || value === null) return typeof value;
  const proto: unknown = getPrototypeOf(value);
  if (proto === null || proto === objectPrototype) return 'an object';
  const name: unknown = (proto as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a custom prototype';
}
