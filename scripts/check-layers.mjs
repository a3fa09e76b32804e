#!/usr/bin/env node
// The layer rule of docs/design.md, checked on every import of src/ (run by `npm run lint`): a
// module imports only from its own folder or from a folder below it, and never from examples/.
// Written here rather than with dependency-cruiser: the rule is one table and twenty lines over
// TypeScript's own import scanner, which the project already has.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** Each folder of src/ and its layer: a module may import from its own folder and from lower layers. */
export const LAYERS = Object.freeze({
  // Types only (the statuses every layer speaks of), and the SQL tag the operation's local
  // transaction and the store share: they import nothing of countersign's.
  records: 0,
  sql: 0,
  canonical: 0,
  i18n: 1,
  operation: 2,
  audit: 4,
  store: 5,
  ledger: 6,
  grants: 7,
  engine: 8,
  // The root entry points: the core's public surface, over everything up to the engine.
  'index.ts': 9.5,
  'errors.ts': 9,
  notify: 10,
  observability: 10,
  // HTTP pieces the server and the MCP adapter share: problem details, the bounded body reader.
  http: 10,
  adapters: 11,
  testing: 11,
  server: 12,
  demo: 13,
  cli: 14,
});

function* sources(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* sources(path);
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) yield path;
  }
}

/** The top folder (or root file) of src/ a path is in, or undefined outside src/. */
function layerOf(path) {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return undefined;
  // A root module is imported as `index.js`: its layer is named after its source, `index.ts`.
  return rel.split(/[\\/]/)[0].replace(/\.js$/, '.ts');
}

/** Every import of src/ that breaks the rule, as `file: import (reason)`. */
export function violations() {
  const found = [];
  for (const file of sources(SRC)) {
    const from = layerOf(file);
    const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName } of importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(dirname(file), fileName);
      const where = `${relative(ROOT, file)}: ${fileName}`;
      if (relative(join(ROOT, 'examples'), target).startsWith('..') === false) {
        found.push(`${where} (src/ never imports examples/)`);
        continue;
      }
      const to = layerOf(target);
      if (to === undefined || to === from) continue;
      if (!(from in LAYERS) || !(to in LAYERS)) {
        found.push(`${where} (${!(from in LAYERS) ? from : to} has no layer in scripts/check-layers.mjs)`);
        continue;
      }
      if (LAYERS[to] >= LAYERS[from]) found.push(`${where} (${from} may not import ${to}: not below it)`);
    }
  }
  return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const found = violations();
  if (found.length > 0) {
    process.stderr.write(`${found.length} import(s) break the layer rule (docs/design.md, "Layers"):\n`);
    for (const line of found) process.stderr.write(`  ${line}\n`);
    process.exit(1);
  }
  process.stdout.write(`layers: every import of src/ points down (${Object.keys(LAYERS).length} layers)\n`);
}
