import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// Importing the root entry `countersign` must not load the server, the adapters or the testing
// kit: a user embedding the engine pays for what they use, and each of those has its own entry
// point (and its own errors). Bundled from the built package, as a consumer's bundler sees it.
const root = join(dirname(fileURLToPath(import.meta.url)), '../..');

/** The package's own modules a bundle of `entry` loads, relative to dist/src/. */
async function modulesLoadedBy(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [join(root, entry)],
    bundle: true,
    metafile: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    logLevel: 'silent',
  });
  return Object.keys(result.metafile.inputs).map((input) =>
    relative('dist/src', relative(root, join(root, input))),
  );
}

describe('the root entry point', () => {
  it('loads nothing from server/, adapters/ or testing/', async () => {
    const loaded = await modulesLoadedBy('dist/src/index.js');
    expect(loaded).toContain('engine/create-engine.js');
    expect(loaded.filter((m) => /^(server|adapters|testing)\//.test(m))).toEqual([]);
  });
});
