import type { z } from 'zod';
import { childPath, indexPath } from '../canonical/json-path.js';

/** One problem with an input, named by its JSON path: `$.amount_minor: expected number, received boolean`. */
export interface InputIssue {
  readonly path: string;
  readonly message: string;
}

function pathOf(segments: readonly PropertyKey[]): string {
  let path = '$';
  for (const segment of segments) {
    path = typeof segment === 'number' ? indexPath(path, segment) : childPath(path, String(segment));
  }
  return path;
}

/** Turns zod issues into path-named issues; unknown keys become one issue per key. */
export function toInputIssues(error: z.ZodError): InputIssue[] {
  const out: InputIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        out.push({ path: childPath(pathOf(issue.path), key), message: 'unknown field' });
    } else {
      out.push({ path: pathOf(issue.path), message: issue.message });
    }
  }
  return out;
}

/** `$.a: message; $.b: message` — one line that names every field at fault. */
export function formatIssues(issues: readonly InputIssue[]): string {
  return issues.map((i) => `${i.path}: ${i.message}`).join('; ');
}
