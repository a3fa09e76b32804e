import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

// console.css sits beside this module in src and, copied by the build, in dist.
const CSS = readFileSync(new URL('./console.css', import.meta.url), 'utf8');

/** The console's stylesheet and the content-hashed path it is served at (cached forever). */
export const STYLESHEET = Object.freeze({
  css: CSS,
  path: `/assets/console.${createHash('sha256').update(CSS).digest('hex').slice(0, 12)}.css`,
});
