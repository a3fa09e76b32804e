import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadServeConfig } from '../../src/server/serve-config.js';
import { tempDir } from '../support/engine.js';

const { dir, cleanup } = tempDir();
afterAll(() => cleanup());

let n = 0;
function configWith(timeouts: string): string {
  const file = join(dir, `config-${++n}.mjs`);
  writeFileSync(
    file,
    `export default { operations: [{ kind: 'x.y', handback: () => '' }], timeouts: ${timeouts} };\n`,
  );
  return file;
}

describe('serve config: timeouts', () => {
  it('passes the connection, statement, request and drain deadlines through', async () => {
    const config = await loadServeConfig(
      configWith('{ connectMs: 2000, statementMs: 4000, requestMs: 8000, drainMs: 3000 }'),
    );
    expect(config.timeouts).toEqual({ connectMs: 2000, statementMs: 4000, requestMs: 8000, drainMs: 3000 });
  });

  it('refuses an unknown deadline, or one that is not a whole number of ms above 0, naming it', async () => {
    await expect(loadServeConfig(configWith('{ statementTimeout: 5 }'))).rejects.toThrow(
      /"timeouts.statementTimeout" is not a known timeout \(connectMs, statementMs, requestMs, drainMs\)/,
    );
    await expect(loadServeConfig(configWith("{ requestMs: '15s' }"))).rejects.toThrow(
      /"timeouts.requestMs" must be a whole number of ms above 0/,
    );
    await expect(loadServeConfig(configWith('{ connectMs: 0 }'))).rejects.toThrow(
      /"timeouts.connectMs" must be a whole number of ms above 0/,
    );
    await expect(loadServeConfig(configWith('5000'))).rejects.toThrow(/"timeouts" must be an object/);
  });
});
