import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageProblem } from '../../src/cli/command.js';
import { RECOVERY_DEFAULTS, recoverySettings, remindBeforeMs } from '../../src/cli/recovery-settings.js';
import { loadServeConfig } from '../../src/server/serve-config.js';
import { cli } from '../support/cli.js';
import { tempDir } from '../support/engine.js';

const { dir, cleanup } = tempDir();
afterAll(() => cleanup());

let n = 0;
function configWith(recovery: string): string {
  const file = join(dir, `config-${++n}.mjs`);
  writeFileSync(
    file,
    `export default { operations: [{ kind: 'x.y', handback: () => '' }], recovery: ${recovery} };\n`,
  );
  return file;
}

describe('serve: lease and sweep settings', () => {
  it('reminds five minutes before expiry unless recovery.remindBefore says otherwise (false: never)', async () => {
    expect(remindBeforeMs(undefined)).toBe(300_000);
    expect(remindBeforeMs({ remindBefore: '10m' })).toBe(600_000);
    expect(remindBeforeMs({ remindBefore: false })).toBe(false);
    const config = await loadServeConfig(configWith("{ remindBefore: '2m' }"));
    expect(remindBeforeMs(config.recovery)).toBe(120_000);
    await expect(loadServeConfig(configWith("{ remindBefore: 'soon' }"))).rejects.toThrow(
      /recovery\.remindBefore/,
    );
  });

  it('defaults to a one-minute lease, a 15s sweep and reconciliation from 10s backing off to 10m', () => {
    expect(recoverySettings({}, undefined)).toEqual(RECOVERY_DEFAULTS);
    expect(RECOVERY_DEFAULTS).toEqual({
      leaseMs: 60_000,
      sweepMs: 15_000,
      reconcile: { firstMs: 10_000, maxMs: 600_000 },
      maxAttempts: 10,
    });
  });

  it('takes flags over the config file, and durations like the operations’ expiresIn', () => {
    expect(
      recoverySettings(
        { lease: '30s', sweepInterval: '10s' },
        { lease: '5m', sweepInterval: '1m', reconcile: { first: '2s', max: '1h' } },
      ),
    ).toEqual({
      leaseMs: 30_000,
      sweepMs: 10_000,
      reconcile: { firstMs: 2_000, maxMs: 3_600_000 },
      maxAttempts: 10,
    });
    expect(recoverySettings({}, { lease: 2_000, reconcile: false, maxAttempts: 4 })).toEqual({
      leaseMs: 2_000,
      sweepMs: 2_000,
      reconcile: false,
      maxAttempts: 4,
    });
  });

  it.each([
    [{ lease: 'soon' }, undefined, '--lease soon: expected a duration like 500ms, 30s, 2m or 1h'],
    [{ lease: '500ms' }, undefined, '--lease 500ms: a lease must be at least 1s'],
    [
      { sweepInterval: '50ms' },
      undefined,
      '--sweep-interval 50ms: the sweep interval must be at least 100ms',
    ],
    [
      { lease: '30s', sweepInterval: '1m' },
      undefined,
      '--sweep-interval 1m: the sweep interval must not exceed the lease (30000ms)',
    ],
    [
      {},
      { lease: '10s', sweepInterval: '20s' },
      'recovery.sweepInterval 20s: the sweep interval must not exceed',
    ],
    [{}, { reconcile: { first: '1m', max: '10s' } }, 'recovery.reconcile.max 10s: must be at least'],
  ] as const)('refuses %j (config %j) naming the flag', (flags, config, message) => {
    expect(() => recoverySettings(flags, config)).toThrow(UsageProblem);
    expect(() => recoverySettings(flags, config)).toThrow(message);
  });

  it('says so at the command line before anything is opened', async () => {
    const run = await cli([
      'serve',
      '--demo',
      '--db',
      join(dir, 'never.db'),
      '--lease',
      '10s',
      '--sweep-interval',
      '20s',
    ]);
    expect(run.code).toBe(2);
    expect(run.err).toContain(
      'countersign serve: --sweep-interval 20s: the sweep interval must not exceed the lease (10000ms)',
    );
  });
});

describe('serve config: recovery', () => {
  it('passes recovery through', async () => {
    const config = await loadServeConfig(configWith("{ lease: '30s', reconcile: { first: '5s' } }"));
    expect(config.recovery).toEqual({ lease: '30s', reconcile: { first: '5s' } });
  });

  it.each([
    ["{ lease: 'half a minute' }", '"recovery.lease" must be a duration like 500ms, 30s, 2m or 1h'],
    ['{ sweepInterval: -5 }', '"recovery.sweepInterval" must be a positive whole number of milliseconds'],
    ["{ leese: '30s' }", '"recovery" has no setting "leese"'],
    ['{ reconcile: true }', '"recovery.reconcile" must be false or { first, max } durations'],
    ["{ reconcile: { first: '1x' } }", '"recovery.reconcile.first" must be a duration'],
    ['{ maxAttempts: 0 }', '"recovery.maxAttempts" must be a whole number of at least 1'],
  ])('refuses %s naming the field', async (recovery, message) => {
    await expect(loadServeConfig(configWith(recovery))).rejects.toThrow(message);
  });
});
