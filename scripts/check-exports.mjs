// Every `exports` entry of package.json must resolve for a consumer: the file exists in dist and
// importing it through the package name works. A green test suite with a broken package is a broken release.
// And each entry exports exactly the names listed in scripts/public-api.json: a name added or
// removed by accident (an `export *`, a moved module) fails here; a deliberate change updates the list.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const listFile = join(root, 'scripts/public-api.json');
const update = process.argv.includes('--update');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const entries = Object.entries(pkg.exports).filter(([, target]) => typeof target !== 'string');
let failures = 0;

/** The names a declaration file exports, split into values and type-only names. */
function declaredNames(files) {
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const byFile = new Map();
  for (const file of files) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    const values = [];
    const types = [];
    const undocumented = [];
    for (const symbol of module ? checker.getExportsOfModule(module) : []) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      (target.flags & ts.SymbolFlags.Value ? values : types).push(symbol.name);
      if (target.getDocumentationComment(checker).length === 0) undocumented.push(symbol.name);
    }
    byFile.set(file, { values: values.sort(), types: types.sort(), undocumented });
  }
  return byFile;
}

/** The files a reader learns the API from: a root name none of them uses is one nobody needs. */
function readerText() {
  const walk = (dir) =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    );
  const files = ['README.md', ...walk('docs').filter((f) => f.endsWith('.md')), ...walk('examples')];
  return files
    .filter((f) => /\.(md|ts)$/.test(f))
    .map((f) => readFileSync(join(root, f), 'utf8'))
    .join('\n');
}

// The root entry is what every user reads first: it stays small, and each of its names is
// documented where it is declared and used in the README, docs/ or examples/.
const ROOT_LIMIT = 60;
function checkRoot(names, undocumented) {
  const text = readerText();
  const unused = names.filter((n) => !new RegExp(`\\b${n}\\b`).test(text));
  const problems = [
    names.length > ROOT_LIMIT && `${names.length} names, more than ${ROOT_LIMIT}`,
    undocumented.length > 0 && `without JSDoc: ${undocumented.join(', ')}`,
    unused.length > 0 && `used nowhere in README.md, docs/ or examples/: ${unused.join(', ')}`,
  ].filter(Boolean);
  for (const problem of problems) console.error(`✗ ${pkg.name}: ${problem}`);
  return problems.length;
}

const actual = {};
const typeFiles = [];
for (const [subpath, target] of entries) {
  for (const condition of ['types', 'import']) {
    if (!existsSync(join(root, target[condition]))) {
      console.error(`✗ ${subpath} (${condition}): ${target[condition]} does not exist`);
      failures++;
    }
  }
  typeFiles.push(join(root, target.types));
}
const declared = declaredNames(typeFiles);
for (const [subpath, target] of entries) {
  const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
  const { undocumented = [], ...names } = declared.get(join(root, target.types)) ?? { values: [], types: [] };
  actual[subpath] = names;
  if (subpath === '.') failures += checkRoot([...names.values, ...names.types], undocumented);
  try {
    const module = await import(specifier);
    const runtime = Object.keys(module).sort();
    if (runtime.length === 0) throw new Error('exports nothing');
    const undeclared = runtime.filter((n) => !names.values.includes(n));
    const missing = names.values.filter((n) => !runtime.includes(n));
    if (undeclared.length + missing.length > 0)
      throw new Error(
        `runtime and declarations differ: only at runtime ${undeclared.join(', ') || '-'}; only declared ${missing.join(', ') || '-'}`,
      );
    console.log(`✓ ${specifier} (${runtime.length} values, ${names.types.length} types)`);
  } catch (error) {
    console.error(`✗ ${specifier}: ${error.message}`);
    failures++;
  }
}

if (update) {
  writeFileSync(listFile, `${JSON.stringify(actual, null, 2)}\n`);
  console.log(`wrote ${listFile}: review the diff and commit it`);
} else {
  const expected = existsSync(listFile) ? JSON.parse(readFileSync(listFile, 'utf8')) : {};
  let drift = false;
  for (const subpath of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
    const want = expected[subpath] ?? { values: [], types: [] };
    const have = actual[subpath] ?? { values: [], types: [] };
    const lines = [];
    for (const kind of ['values', 'types']) {
      for (const name of have[kind].filter((n) => !want[kind].includes(n)))
        lines.push(`  + ${kind === 'types' ? 'type ' : ''}${name}`);
      for (const name of want[kind].filter((n) => !have[kind].includes(n)))
        lines.push(`  - ${kind === 'types' ? 'type ' : ''}${name}`);
    }
    if (lines.length > 0) {
      drift = true;
      console.error(
        `✗ ${subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`} exports differ from scripts/public-api.json:`,
      );
      console.error(lines.join('\n'));
    }
  }
  if (drift) {
    console.error(
      'The public API changed. If that is deliberate, run `npm run build && npm run check:exports -- --update` and commit scripts/public-api.json with the change; otherwise export the name explicitly (or stop exporting it).',
    );
    failures++;
  }
}

const bin = join(root, pkg.bin.countersign);
if (!existsSync(bin)) {
  console.error(`✗ bin countersign: ${pkg.bin.countersign} does not exist`);
  failures++;
}
process.exit(failures === 0 ? 0 : 1);
