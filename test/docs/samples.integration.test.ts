// Every ```ts and ```js sample of README.md and docs/*.md compiles as a reader's module: each is a
// module of its own beside package.json, so `countersign` and `countersign/…` resolve through the
// package's `exports` to the built declarations in dist/ (what an install gets), and the peers to
// node_modules. Checked with the project's TypeScript and compiler options (less the unused-name
// checks: a sample names a result to show its type). Needs `npm run build` first, as CI does.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkSamples, documentsOf, type Sample, samplesOf } from './samples.js';

const root = join(import.meta.dirname, '../..');
const samples = documentsOf(root).flatMap((file) => samplesOf(root, file));
describe('code samples in README.md and docs/', () => {
  let errors: Map<Sample, string[]>;
  beforeAll(() => {
    if (!existsSync(join(root, 'dist/src/index.d.ts')))
      throw new Error('run `npm run build` first: samples import the built package');
    errors = checkSamples(root, samples);
  }, 120_000);

  it('finds the samples of every document that has code', () => {
    expect(samples.filter((s) => s.name.startsWith('README.md')).length).toBeGreaterThanOrEqual(5);
    expect(new Set(samples.map((s) => s.name.split(':')[0]))).toEqual(
      new Set(['README.md', 'docs/adapters.md', 'docs/server.md', 'docs/testing-kit.md']),
    );
  });

  it.each(samples.map((s) => [s.name, s] as const))('%s compiles', (_name, sample) => {
    expect(errors.get(sample)).toEqual([]);
  });
});

describe('how samples are read from Markdown', () => {
  const markdown = [
    '<!-- sample-context',
    'declare const engine: { id: string };',
    '-->',
    '```ts file=first.ts',
    'export const a: string = engine.id;',
    '```',
    'Then:',
    '```ts fragment',
    'const b: number = a;',
    '```',
    '```sh',
    'npm test',
    '```',
  ].join('\n');
  const folder = mkdtempSync(join(tmpdir(), 'countersign-samples-'));
  writeFileSync(join(folder, 'doc.md'), markdown);
  const [first, second, ...rest] = samplesOf(folder, 'doc.md');

  it('prepends the hidden context, names the module, and skips other languages', () => {
    expect(rest).toEqual([]);
    expect(first).toEqual({
      name: 'doc.md:4',
      language: 'ts',
      file: 'first.ts',
      text: 'declare const engine: { id: string };\nexport const a: string = engine.id;',
      origins: ['doc.md:2 (hidden context)', 'doc.md:5'],
    });
  });

  it('compiles a fragment after the sample before it, and reports its errors at its own lines', () => {
    expect(second?.text).toBe(`${first?.text}\nconst b: number = a;`);
    expect(second?.origins.at(-1)).toBe('doc.md:9');
    const errors = checkSamples(root, [second as Sample]).get(second as Sample);
    expect(errors).toEqual(["doc.md:9: Type 'string' is not assignable to type 'number'."]);
  });
});
