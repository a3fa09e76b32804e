import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../src/canonical/errors.js';
import { loadServeConfig } from '../../src/server/serve-config.js';
import { tempDir } from '../support/engine.js';

const { dir, cleanup } = tempDir();
afterAll(() => cleanup());

let n = 0;
function configWith(mcp: string): string {
  const file = join(dir, `config-${++n}.mjs`);
  writeFileSync(file, `export default { operations: [{ kind: 'x.y', handback: () => '' }], mcp: ${mcp} };\n`);
  return file;
}

describe('serve config: MCP limits', () => {
  it('passes the MCP session and body limits through', async () => {
    const config = await loadServeConfig(
      configWith('{ maxSessionsPerTenant: 5, maxSessionsPerAgent: 2, maxBodyBytes: 65536 }'),
    );
    expect(config.mcp).toEqual({ maxSessionsPerTenant: 5, maxSessionsPerAgent: 2, maxBodyBytes: 65536 });
  });

  it('refuses an unknown limit, or one that is not a whole number above 0', async () => {
    await expect(loadServeConfig(configWith('{ maxSesions: 5 }'))).rejects.toThrow(
      /"mcp.maxSesions" is not a known MCP limit/,
    );
    await expect(loadServeConfig(configWith('{ maxSessionsPerTenant: 0 }'))).rejects.toThrow(
      ConfigurationError,
    );
    await expect(loadServeConfig(configWith("{ maxBodyBytes: '1mb' }"))).rejects.toThrow(
      /"mcp.maxBodyBytes" must be a whole number above 0/,
    );
  });
});
