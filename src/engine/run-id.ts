/**
 * True for the text a missing value becomes through `String(…)` or a template literal —
 * `"undefined"` or `"null"`, in any case and with any surrounding blanks. Such a run id is refused
 * like a missing one: proposals must never share a run called "undefined".
 */
export function isPlaceholder(value: string): boolean {
  const text = value.trim().toLowerCase();
  return text === 'undefined' || text === 'null';
}

/**
 * Why a run id cannot be used, or `undefined` when it can: `missing` (not a string, or blank) or
 * `placeholder` (see {@link isPlaceholder}).
 */
export function runIdProblem(value: unknown): 'missing' | 'placeholder' | undefined {
  if (typeof value !== 'string' || value.trim() === '') return 'missing';
  return isPlaceholder(value) ? 'placeholder' : undefined;
}
