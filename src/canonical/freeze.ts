import { type CanonicalizeOptions, canonicalize } from './canonicalize.js';
import { type Digest, digestOf } from './digest.js';
import { type JsonValue, parseCanonicalFrozen } from './parse-json.js';

/**
 * `T` made read-only all the way down: arrays become readonly arrays (tuples keep their
 * shape), object members become `readonly`. What {@link freeze} returns, and what the compiler
 * holds you to.
 *
 * @example
 * const args: DeepReadonly<{ customer: { id: string }; items: string[] }> = freeze(input);
 * args.customer.id = 'x'; // compile error (and a TypeError at run time)
 */
export type DeepReadonly<T> = [T] extends [JsonValue]
  ? [JsonValue] extends [T]
    ? ReadonlyJsonValue
    : ReadonlyMembers<T>
  : ReadonlyMembers<T>;

// `JsonValue` is recursive; naming its read-only form keeps the compiler from unrolling it.
type ReadonlyMembers<T> = T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** A {@link JsonValue} read-only all the way down: what `freeze(parseJson(text))` returns. */
export type ReadonlyJsonValue =
  | null
  | boolean
  | number
  | string
  | readonly ReadonlyJsonValue[]
  | ReadonlyJsonObject;

/** A read-only JSON object. */
export interface ReadonlyJsonObject {
  readonly [key: string]: ReadonlyJsonValue;
}

/**
 * A frozen copy, its digest, and the canonical text both were made from. The digest is the
 * digest of `canonical`, and `canonical` is exactly `canonicalize(value)`.
 */
export interface Frozen<T> {
  readonly value: DeepReadonly<T>;
  readonly digest: Digest;
  readonly canonical: string;
}

/**
 * Freezes a JSON value: a deep copy through canonical JSON ({@link canonicalize}, then a strict
 * parse), every object and array of the copy `Object.freeze`d. Later changes to the original,
 * at any depth, never reach the copy, and the copy cannot be changed at all (assigning to it
 * throws in strict mode). A reference is not a freeze, and neither is a shallow copy.
 *
 * The copy is the canonical data: keys in canonical order, `-0` as `0`. Anything that is not
 * JSON data throws, exactly as {@link canonicalize} does.
 *
 * @throws {CanonicalizationError} when the value is not JSON data.
 *
 * @example
 * const args = { order_id: 'ord_1', amount: 40, customer: { id: 'cus_1' } };
 * const frozen = freeze(args);
 * args.amount = 400;
 * args.customer.id = 'cus_2';
 * frozen.amount; // 40
 * frozen.customer.id; // 'cus_1'
 */
export function freeze<T>(value: T, options?: CanonicalizeOptions): DeepReadonly<T> {
  return copy<T>(canonicalize(value, options), options);
}

/**
 * {@link freeze} and {@link digest} in one canonicalization: the frozen copy, its digest and
 * the canonical text, which is what a proposal stores.
 *
 * @throws {CanonicalizationError} when the value is not JSON data.
 *
 * @example
 * const { value, digest, canonical } = freezeWithDigest(args);
 * log.info({ hash: digest.short }, 'paused for approval');
 */
export function freezeWithDigest<T>(value: T, options?: CanonicalizeOptions): Frozen<T> {
  const canonical = canonicalize(value, options);
  return Object.freeze({ value: copy<T>(canonical, options), digest: digestOf(canonical), canonical });
}

function copy<T>(canonical: string, options: CanonicalizeOptions | undefined): DeepReadonly<T> {
  // The text is our own canonical output: no length limit, and the same depth limit it was
  // produced under, so anything canonicalize accepted parses back.
  const parsed = parseCanonicalFrozen(canonical, { maxLength: Number.POSITIVE_INFINITY, ...options });
  return parsed as DeepReadonly<T>;
}
