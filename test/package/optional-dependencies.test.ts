import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};
const OPTIONAL = ['better-sqlite3', '@modelcontextprotocol/sdk', 'prom-client', 'pino'];

// Runtime imports only: `import type`/`export type` are erased. Dynamic imports are loaded on demand.
const STATIC_IMPORT =
  /^\s*(?:import|export)(?!\s+type\s)\s[^'";]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]/gm;

/** Every package a source file reaches through static runtime imports, with the file that imports it. */
function packagesReached(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const specifier = match[1] ?? match[2] ?? '';
      if (specifier.startsWith('.')) {
        const ts = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
        visit(existsSync(ts) ? ts : `${ts}x`);
      } else if (!specifier.startsWith('node:')) {
        const name = specifier
          .split('/')
          .slice(0, specifier.startsWith('@') ? 2 : 1)
          .join('/');
        if (!packages.has(name)) packages.set(name, file.slice(root.length + 1));
      }
    }
  };
  visit(join(root, entry));
  return packages;
}

describe('optional integrations are optional', () => {
  it.each(OPTIONAL)(
    '%s is an optional peer (and a devDependency for the demo), never a dependency',
    (name) => {
      expect(pkg.dependencies[name]).toBeUndefined();
      expect(pkg.peerDependencies[name]).toBeDefined();
      expect(pkg.peerDependenciesMeta[name]?.optional).toBe(true);
      expect(pkg.devDependencies[name]).toBeDefined();
    },
  );

  it.each(['src/index.ts', 'src/store/index.ts', 'src/server/index.ts', 'src/store/postgres/index.ts'])(
    '%s imports none of the optional packages',
    (entry) => {
      const reached = packagesReached(entry);
      const optional = [...reached].filter(([name]) => name in pkg.peerDependencies);
      expect(optional).toEqual([]);
    },
  );

  it('the root entry reaches only its dependencies', () => {
    expect([...packagesReached('src/index.ts').keys()].sort()).toEqual(['zod']);
  });

  it('the CLI reaches pino, prom-client and the MCP SDK only on demand', () => {
    const reached = packagesReached('src/cli/main.ts');
    expect(OPTIONAL.filter((name) => reached.has(name))).toEqual([]);
  });
});

describe('loadOptional', () => {
  it('turns a missing optional package into an error that says what to install', async () => {
    const { loadOptional } = await import('../../src/cli/load-optional.js');
    const { ConfigurationError } = await import('../../src/index.js');
    const missing = 'countersign-test-absent-package';
    const attempt = loadOptional(missing, 'countersign serve', () => import(/* @vite-ignore */ missing));
    await expect(attempt).rejects.toBeInstanceOf(ConfigurationError);
    await expect(attempt).rejects.toThrow(
      `countersign serve needs the "${missing}" package: npm install ${missing}`,
    );
  });

  it('passes through any other failure of the module', async () => {
    const { loadOptional } = await import('../../src/cli/load-optional.js');
    const broken = new Error('boom');
    await expect(loadOptional('pino', 'countersign serve', () => Promise.reject(broken))).rejects.toBe(
      broken,
    );
  });
});
