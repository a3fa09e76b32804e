import { type JsonValue, parseCanonicalFrozen } from './parse-json.js';

/**
 * Parses JSON text this application wrote itself (canonical text in a store row), deep-frozen.
 * Still strict about syntax, duplicate keys and lone surrogates, but every number is read as the
 * double it names: `canonicalize(1e30)` is `1e+30`, which {@link parseJson} refuses from an
 * untrusted client and which must still read back from a row.
 */
export function parseStoredJson(text: string): JsonValue {
  return parseCanonicalFrozen(text, { maxLength: Number.POSITIVE_INFINITY });
}
