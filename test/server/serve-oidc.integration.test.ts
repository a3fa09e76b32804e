import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/engine.js';
import { serve } from '../support/serve.js';
import { runCli } from '../../src/cli/run-cli.js';
import { authorizeAt, CookieBrowser, startTestProvider } from './support/oidc-provider.js';

const NAMES = [
  'COUNTERSIGN_OIDC_ISSUER',
  'COUNTERSIGN_OIDC_CLIENT_ID',
  'COUNTERSIGN_OIDC_CLIENT_SECRET',
  'COUNTERSIGN_OIDC_TENANT_CLAIM',
  'COUNTERSIGN_OIDC_ROLES_CLAIM',
] as const;

describe('countersign serve --demo with COUNTERSIGN_OIDC_*', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const name of NAMES) delete process.env[name];
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('offers "Sign in with SSO" and maps the claims the variables name', async () => {
    const provider = await startTestProvider();
    cleanups.push(() => provider.close());
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    process.env['COUNTERSIGN_OIDC_ISSUER'] = provider.issuer;
    process.env['COUNTERSIGN_OIDC_CLIENT_ID'] = provider.clientId;
    process.env['COUNTERSIGN_OIDC_CLIENT_SECRET'] = provider.clientSecret;
    process.env['COUNTERSIGN_OIDC_TENANT_CLAIM'] = 'org';
    process.env['COUNTERSIGN_OIDC_ROLES_CLAIM'] = 'groups';
    const server = await serve(['--demo', '--db', join(dir, 'countersign.db'), '--port', '0']);
    cleanups.push(async () => void (await server.stop()));
    await provider.register(server.url);
    provider.accounts.set('grace', {
      email: 'grace@globex.test',
      extra: { org: 'globex', groups: 'viewer' },
    });
    const browser = new CookieBrowser();
    expect((await browser.request(`${server.url}/login`)).html).toContain('Sign in with SSO');
    const landed = await browser.request(await authorizeAt(browser, server.url, provider, 'grace'));
    expect(landed.status).toBe(200);
    const inbox = await browser.request(`${server.url}/`);
    expect(inbox.status).toBe(200);
    expect(inbox.html).toContain('grace@globex.test');
    expect(inbox.html).toContain('globex');
  });

  it('refuses to start with a plain-http issuer off loopback', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    process.env['COUNTERSIGN_OIDC_ISSUER'] = 'http://idp.example.com';
    process.env['COUNTERSIGN_OIDC_CLIENT_ID'] = 'countersign';
    const stderr: string[] = [];
    const code = await runCli(['serve', '--demo', '--db', join(dir, 'countersign.db'), '--port', '0'], {
      stdout: () => {},
      stderr: (t) => stderr.push(t),
      stdin: async () => '',
    });
    expect(code).toBe(2);
    expect(stderr.join('')).toContain('must be https://');
  });
});
