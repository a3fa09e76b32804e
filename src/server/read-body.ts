import type { Context } from 'hono';
import { JsonParseError } from '../canonical/errors.js';
import { type JsonValue, parseJson } from '../canonical/parse-json.js';
import { bodyTooLarge, HttpProblem } from '../http/http-problem.js';
import { readBoundedBody } from '../http/read-bounded-body.js';

/** Largest JSON body the API reads. */
export const MAX_JSON_BYTES = 64 * 1024;
/** Deepest nesting of a JSON body. */
export const MAX_JSON_DEPTH = 32;
/** Largest form body the console reads (an edited email body fits). */
export const MAX_FORM_BYTES = 256 * 1024;

async function readLimited(
  c: Context,
  maxBytes: number,
  reason: 'invalid_json' | 'invalid_form',
): Promise<string> {
  const body = await readBoundedBody(c.req.raw, maxBytes);
  if (body.kind === 'too_large') throw bodyTooLarge(maxBytes);
  if (body.kind === 'broken') throw new HttpProblem(400, reason, 'the request body was cut off');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(body.bytes);
  } catch {
    throw new HttpProblem(400, reason, 'the body is not valid UTF-8');
  }
}

function mediaType(c: Context): string {
  return (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

// The labels of UTF-8 a client plausibly sends: `utf-8` and the common misspelling `utf8`.
const UTF8_LABELS: ReadonlySet<string> = new Set(['utf-8', 'utf8']);

/**
 * Refuses a `charset` parameter that is not UTF-8 (415 `unsupported_media_type`): bodies are
 * decoded as UTF-8 only, and a `charset=latin1` body read as UTF-8 would be accepted as text its
 * sender did not write. Every `charset` parameter counts, so a second one cannot slip past.
 */
function refuseForeignCharset(c: Context, send: string): void {
  const params = (c.req.header('content-type') ?? '').split(';').slice(1);
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'charset') continue;
    const charset = param
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .trim();
    if (UTF8_LABELS.has(charset.toLowerCase())) continue;
    throw new HttpProblem(
      415,
      'unsupported_media_type',
      `charset ${JSON.stringify(charset.slice(0, 40))} is not accepted: ${send} in UTF-8 (charset=utf-8, or no charset)`,
    );
  }
}

// parseJson already keeps `__proto__` as plain data; refusing the key outright keeps it from
// reaching any code that might spread or merge the value.
function findProtoKey(value: JsonValue, path: string): string | undefined {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = findProtoKey(item, `${path}[${i}]`);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      if (key === '__proto__') return `${path}.__proto__`;
      const found = findProtoKey(value[key]!, `${path}.${key}`);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Reads a request body as strict JSON: `application/json` with no charset or UTF-8's (else 415
 * `unsupported_media_type`: JSON is UTF-8, RFC 8259 §8.1), at most {@link MAX_JSON_BYTES} (else 413
 * `body_too_large`, counted as the body streams), valid
 * UTF-8, parsed by the foundation's `parseJson` (duplicate keys, unsafe numbers, lone surrogates and nesting deeper
 * than {@link MAX_JSON_DEPTH} are refused) and no `__proto__` key anywhere. Every refusal is a
 * 400 `invalid_json`, never a 500; the JSON fault is the body's `jsonError` (`duplicate_key`, `too_deep`…).
 */
export async function readJsonBody(c: Context): Promise<JsonValue> {
  if (mediaType(c) !== 'application/json') {
    throw new HttpProblem(415, 'unsupported_media_type', 'send the body as application/json');
  }
  refuseForeignCharset(c, 'send the body as application/json');
  const text = await readLimited(c, MAX_JSON_BYTES, 'invalid_json');
  let value: JsonValue;
  try {
    value = parseJson(text, { maxDepth: MAX_JSON_DEPTH, maxLength: MAX_JSON_BYTES });
  } catch (error) {
    if (error instanceof JsonParseError)
      throw new HttpProblem(400, 'invalid_json', error.message, { extra: { jsonError: error.reason } });
    throw error;
  }
  const proto = findProtoKey(value, '$');
  if (proto)
    throw new HttpProblem(400, 'invalid_json', `${proto}: the key "__proto__" is not accepted`, {
      extra: { jsonError: 'proto_key' },
    });
  return value;
}

/**
 * Reads an `application/x-www-form-urlencoded` console form (UTF-8: a declared charset other than
 * UTF-8 is 415 `unsupported_media_type`), at most {@link MAX_FORM_BYTES} (else 413
 * `body_too_large`, counted as the body streams). A field sent twice, or a NUL character anywhere, is refused (`invalid_form`), never silently merged or passed on.
 */
export async function readFormBody(c: Context): Promise<ReadonlyMap<string, string>> {
  if (mediaType(c) !== 'application/x-www-form-urlencoded') {
    throw new HttpProblem(
      415,
      'unsupported_media_type',
      'send the form as application/x-www-form-urlencoded',
    );
  }
  refuseForeignCharset(c, 'send the form');
  const text = await readLimited(c, MAX_FORM_BYTES, 'invalid_form');
  const fields = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(text)) {
    if (fields.has(key))
      throw new HttpProblem(400, 'invalid_form', `the field "${key.slice(0, 40)}" appears twice`);
    // No form field a person types holds U+0000, and PostgreSQL text cannot store it.
    if (key.includes('\u0000') || value.includes('\u0000'))
      throw new HttpProblem(400, 'invalid_form', 'a form field holds a NUL character (U+0000)');
    fields.set(key, value);
  }
  return fields;
}
