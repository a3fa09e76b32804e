// What `npm pack` ships: the license its package.json names, the README, the built entry points
// and nothing that points at files left behind (source maps without their sources). Reads the
// built dist/ (`npm run build` first, as CI does).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  license: string;
  type: string;
  engines: { node: string };
  exports: Record<string, string | { types: string; import: string }>;
};

describe('the packed package', () => {
  let files: string[];
  beforeAll(() => {
    // --ignore-scripts: list what is built now, without `prepare` building it again.
    const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
    });
    const [packed] = JSON.parse(out) as [{ files: { path: string }[] }];
    files = packed.files.map((f) => f.path);
  }, 60_000);

  it('ships the Apache-2.0 license text that package.json names', () => {
    expect(pkg.license).toBe('Apache-2.0');
    expect(files).toContain('LICENSE');
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(license).toMatch(/^Copyright \d{4} /);
    expect(license).toContain('Apache License\n                           Version 2.0, January 2004');
    expect(license).toContain('END OF TERMS AND CONDITIONS');
  });

  it('ships every entry point, the README, the changelog, and no source map or TypeScript source', () => {
    const targets = Object.values(pkg.exports).flatMap((t) =>
      typeof t === 'string' ? [t] : [t.types, t.import],
    );
    const missing = targets.map((t) => t.replace(/^\.\//, '')).filter((t) => !files.includes(t));
    expect(missing).toEqual([]);
    expect(files).toContain('README.md');
    expect(files).toContain('CHANGELOG.md');
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
    expect(files.filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files.filter((f) => f.startsWith('test/') || f.startsWith('dist/test/'))).toEqual([]);
  });

  it('no shipped module names a source map', () => {
    const mapped = files
      .filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))
      .filter((f) => readFileSync(join(root, f), 'utf8').includes('sourceMappingURL'));
    expect(mapped).toEqual([]);
  });

  it('says it is an ES module for Node 20 and later, with import conditions only', () => {
    expect(pkg.type).toBe('module');
    expect(pkg.engines.node).toBe('>=20');
    const conditions = new Set(
      Object.values(pkg.exports).flatMap((t) => (typeof t === 'string' ? [] : Object.keys(t))),
    );
    expect([...conditions].sort()).toEqual(['import', 'types']);
  });
});
