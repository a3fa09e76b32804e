// Every `exports` entry of package.json must resolve for a consumer: the file exists in dist and
// importing it through the package name works. A green test suite with a broken package is a broken release.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
let failures = 0;
for (const [subpath, target] of Object.entries(pkg.exports)) {
  if (typeof target === 'string') continue;
  for (const condition of ['types', 'import']) {
    if (!existsSync(join(root, target[condition]))) {
      console.error(`✗ ${subpath} (${condition}): ${target[condition]} does not exist`);
      failures++;
    }
  }
  const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
  try {
    const module = await import(specifier);
    const names = Object.keys(module);
    if (names.length === 0) throw new Error('exports nothing');
    console.log(`✓ ${specifier} (${names.length} exports)`);
  } catch (error) {
    console.error(`✗ ${specifier}: ${error.message}`);
    failures++;
  }
}
const bin = join(root, pkg.bin.countersign);
if (!existsSync(bin)) {
  console.error(`✗ bin countersign: ${pkg.bin.countersign} does not exist`);
  failures++;
}
process.exit(failures === 0 ? 0 : 1);
