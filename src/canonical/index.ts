/**
 * `countersign/canonical`: canonical JSON (RFC 8785), strict parsing, digests, keyed seals,
 * freezing and scope diffs — what `countersign canonicalize`, `digest` and `diff` run, for a
 * reader who checks a digest or a seal outside the engine. Its errors are in `./errors.js`.
 *
 * @example
 * import { canonicalize, digestCanonical } from 'countersign/canonical';
 * const text = canonicalize({ invoice_id: 'inv-104', amount_minor: 24049 });
 * console.log(digestCanonical(text).sha256);
 *
 * @packageDocumentation
 */
export {
  type CanonicalizeOptions,
  canonicalize,
  DEFAULT_MAX_DEPTH,
  MAX_DEPTH_LIMIT,
} from './canonicalize.js';
export {
  type Digest,
  digest,
  digestCanonical,
  displayHash,
  INVALID_HASH_PREFIX,
  isSha256Hex,
  SHORT_HASH_LENGTH,
  shortHash,
} from './digest.js';
export {
  type CanonicalizationErrorCode,
  CanonicalizationError,
  ConfigurationError,
  CountersignError,
  JsonParseError,
  type JsonParseReason,
} from './errors.js';
export {
  type DeepReadonly,
  type Frozen,
  freeze,
  freezeWithDigest,
  type ReadonlyJsonObject,
  type ReadonlyJsonValue,
} from './freeze.js';
export {
  DEFAULT_MAX_LENGTH,
  type JsonObject,
  type JsonValue,
  type ParseJsonOptions,
  parseJson,
} from './parse-json.js';
export {
  diffScopes,
  type FieldRule,
  type FieldRules,
  formatScopeChange,
  hidden,
  last4,
  type Redactor,
  type ScopeChange,
} from './scope-diff.js';
export { MIN_SEAL_KEY_BYTES, seal, verifySeal } from './seal.js';
