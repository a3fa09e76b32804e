/**
 * The value a record holds under `key` as its own property, or `undefined`.
 *
 * Keys chosen by a client, a model or a stored row (a grant bound, a scope field, a field
 * pattern) must never reach `Object.prototype`: `shape['constructor']` is the `Object` function
 * and `shape['__proto__']` is the prototype itself, so a plain `record[key]` turns such a key
 * into a member nobody declared — a crash at best. Every lookup by such a key goes through here.
 *
 * @example
 * own({ amount_minor: 1 }, 'amount_minor'); // 1
 * own({ amount_minor: 1 }, 'constructor');  // undefined
 */
export function own<V>(record: Readonly<Record<string, V>> | undefined, key: string): V | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}
