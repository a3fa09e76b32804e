// tsc compiles only TypeScript: this copies the other files the code reads at run time (the
// console's stylesheet) from src to the same place under dist/src.
import { copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ASSET = /\.css$/;

function* assets(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* assets(path);
    else if (ASSET.test(entry.name)) yield path;
  }
}

for (const source of assets('src')) {
  const target = join('dist', 'src', relative('src', source));
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(source, target);
}
