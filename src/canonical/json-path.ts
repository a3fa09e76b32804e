const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** Appends an object key to a JSON path: `$.a` for identifiers, `$["a b"]` otherwise. */
export function childPath(parent: string, key: string): string {
  return IDENTIFIER.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

/** Appends an array index to a JSON path: `$.items[2]`. */
export function indexPath(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/**
 * The field pattern of a concrete path, as operations declare fields: `$.attachments[2].id`
 * becomes `attachments[].id`, `$` becomes the empty string.
 */
export function fieldPattern(path: string): string {
  return path.replace(/\[\d+\]/g, '[]').replace(/^\$\.?/, '');
}
