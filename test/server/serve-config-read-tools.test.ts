import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadServeConfig } from '../../src/server/serve-config.js';
import { tempDir } from '../support/engine.js';

const { dir, cleanup } = tempDir();
afterAll(() => cleanup());

let n = 0;
function configWith(readTools: string): string {
  const file = join(dir, `config-${++n}.mjs`);
  writeFileSync(
    file,
    `export default { operations: [{ kind: 'x.y', handback: () => '' }], readTools: ${readTools} };\n`,
  );
  return file;
}

describe('serve config: read tools', () => {
  it('passes read tools through, and leaves them out when the module has none', async () => {
    const config = await loadServeConfig(
      configWith("[{ name: 'list_x', description: 'x', read: () => [] }]"),
    );
    expect(config.readTools?.map((t) => t.name)).toEqual(['list_x']);
    expect((await loadServeConfig(configWith('undefined'))).readTools).toBeUndefined();
  });

  it('refuses readTools that are not defineReadTool results', async () => {
    await expect(loadServeConfig(configWith("{ name: 'list_x' }"))).rejects.toThrow(
      /"readTools" must be an array of defineReadTool/,
    );
    await expect(loadServeConfig(configWith("[{ name: 'list_x' }]"))).rejects.toThrow(/"readTools"/);
  });
});
