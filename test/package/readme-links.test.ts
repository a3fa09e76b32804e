// The README is the package's page on the registry, where a relative link resolves nowhere: every
// link into the repository is absolute, built from package.json's `repository` (the one place that
// names it), and points at a file or folder that exists; every in-page anchor names a heading.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  repository: { url: string };
  homepage: string;
  bugs: { url: string };
};
const readme = readFileSync(join(root, 'README.md'), 'utf8');
// Links outside code fences and inline code: `[text](target)` and `![alt](target)`.
const prose = readme.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
const targets = [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

describe('README links on the registry page', () => {
  it('package.json names the repository, its issues and its page alike', () => {
    expect(repository).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
    expect(pkg.homepage).toBe(`${repository}#readme`);
    expect(pkg.bugs.url).toBe(`${repository}/issues`);
  });

  it('has no relative link: each one into the repository is absolute and names a file that exists', () => {
    const relative = targets.filter((t) => !/^(https?:|mailto:|#)/.test(t));
    expect(relative).toEqual([]);
    const own = targets.filter((t) => t.startsWith('https://github.com/') && !t.startsWith(`${repository}/`));
    // Other GitHub links are to other projects (an upstream issue): none may look like ours.
    expect(own.filter((t) => /\/(blob|tree|raw)\/main\//.test(t))).toEqual([]);
    const missing = targets
      .filter((t) => t.startsWith(`${repository}/`))
      .map((t) => t.slice(repository.length + 1))
      .map((t) => /^(blob|tree|raw)\/main\/([^#]*)/.exec(t)?.[2] ?? `(not a blob, tree or raw link) ${t}`)
      .filter((path) => !existsSync(join(root, path)));
    expect(missing).toEqual([]);
    expect(targets.filter((t) => t.startsWith(`${repository}/`)).length).toBeGreaterThan(10);
  });

  it('every in-page anchor names a heading of the README', () => {
    const headings = new Set([...readme.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
    const broken = targets.filter((t) => t.startsWith('#') && !headings.has(t.slice(1)));
    expect(broken).toEqual([]);
  });
});
