import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REASON_DESCRIPTIONS, REASONS } from '../../src/index.js';
import { SERVER_REASONS } from '../../src/server/index.js';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');
const listed = (text: string) => new Set([...text.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));

describe('reason codes in the docs', () => {
  it('every lifecycle code has a description of its own', () => {
    expect(Object.keys(REASON_DESCRIPTIONS).sort()).toEqual([...REASONS].sort());
    const descriptions = Object.values(REASON_DESCRIPTIONS);
    expect(new Set(descriptions).size).toBe(descriptions.length);
  });

  it.each(['README.md', 'docs/design.md'])('%s lists every lifecycle and HTTP reason code', (file) => {
    const names = listed(read(file));
    const missing = [...REASONS, ...SERVER_REASONS].filter((r) => !names.has(r));
    expect(missing).toEqual([]);
  });
});
