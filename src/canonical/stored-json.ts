import { type JsonValue, parseCanonicalFrozen } from './parse-json.js';

// One lifecycle reads the same stored texts several times (a proposal's policy, scope and
// arguments: when it is proposed, approved, claimed and guarded). The parse of a text is a pure
// function of that text and its result is deep-frozen, so this process keeps the last results by
// their exact text: a row changed by a single character is another key and is parsed (and
// refused) afresh. Only what parsed is kept, and only short texts, in a bounded map.
const KEPT_TEXTS = 256;
const KEPT_TEXT_LENGTH = 16_384;
const parsedTexts = new Map<string, JsonValue>();

/**
 * Parses JSON text this application wrote itself (canonical text in a store row), deep-frozen.
 * Still strict about syntax, duplicate keys and lone surrogates, but every number is read as the
 * double it names: `canonicalize(1e30)` is `1e+30`, which {@link parseJson} refuses from an
 * untrusted client and which must still read back from a row. The same text gives the same frozen
 * value (this process keeps recent results by their exact text).
 */
export function parseStoredJson(text: string): JsonValue {
  const kept = parsedTexts.get(text);
  if (kept !== undefined) return kept;
  const value = parseCanonicalFrozen(text, { maxLength: Number.POSITIVE_INFINITY });
  if (typeof text === 'string' && text.length <= KEPT_TEXT_LENGTH) {
    if (parsedTexts.size >= KEPT_TEXTS) {
      const oldest = parsedTexts.keys().next();
      if (!oldest.done) parsedTexts.delete(oldest.value);
    }
    parsedTexts.set(text, value);
  }
  return value;
}
