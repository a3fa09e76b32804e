import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/commands/index.js';
import { cli } from '../support/cli.js';

// Every group of subcommands (`audit`, `token`, `proposals`, …): the first word of a longer path.
const groups = [...new Set(COMMANDS.filter((c) => c.path.length > 1).map((c) => c.path[0]!))];

describe('the operator CLI as a user meets it', () => {
  it.each(COMMANDS.map((c) => [c.path.join(' ')]))(
    '`countersign %s --help` describes it, exit 0',
    async (path) => {
      const r = await cli([...path.split(' '), '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`countersign ${path}`);
      expect(r.err).toBe('');
    },
  );

  it('has command groups to test', () => {
    expect(groups).toEqual(expect.arrayContaining(['audit', 'token', 'proposals']));
  });

  it.each(groups.map((g) => [g]))('`countersign %s --help` lists the group, exit 0', async (group) => {
    const r = await cli([group, '--help']);
    expect(r.code).toBe(0);
    for (const c of COMMANDS.filter((c) => c.path[0] === group))
      expect(r.out).toContain(`${c.path.join(' ')}  `);
    expect(r.err).toBe('');
  });

  it.each(COMMANDS.map((c) => [c.path.join(' ')]))(
    '`countersign %s --bogus` names the flag, exit 2',
    async (path) => {
      const r = await cli([...path.split(' '), '--bogus-flag']);
      expect(r.code).toBe(2);
      expect(r.err).toContain("Unknown option '--bogus-flag'");
    },
  );

  it('an unknown command is still exit 2, with or without --help', async () => {
    expect((await cli(['nonsense'])).code).toBe(2);
    expect((await cli(['nonsense', '--help'])).code).toBe(2);
    expect((await cli(['audit', 'nonsense'])).code).toBe(2);
  });
});
