import { PrincipalDirectory } from '../../server/directory/principal-directory.js';
import { type Command, stringOption } from '../command.js';
import { openCliStore, STORE_OPTIONS, storeOptionsHelp } from '../store-option.js';

/** `countersign token list`: the API tokens, by id, never their secrets. */
export const tokenListCommand: Command = {
  path: ['token', 'list'],
  summary: 'list agent and operator API tokens by id (never their secrets)',
  help: `Usage: countersign token list (--db FILE | --store LOCATION) [--tenant T]

One line per agent or operator API token, oldest first: its id, kind, tenant, principal,
label, when it was issued, and "live" or when it was revoked. A token id is tok_ and the
first 16 hex digits of the token's stored SHA-256 hash: it names the token without revealing
it, and is what \`countersign token revoke\` takes. Secrets are stored only as hashes and are
never printed.

${storeOptionsHelp(21, 'an existing SQLite file')}
  --tenant T         only that tenant's tokens`,
  options: { ...STORE_OPTIONS, tenant: { type: 'string' } },
  async run(args, io) {
    const tenant = stringOption(args, 'tenant');
    const store = await openCliStore(args);
    try {
      const directory = new PrincipalDirectory(store);
      await directory.migrate();
      const tokens = await directory.tokens(tenant === undefined ? {} : { tenant });
      if (tokens.length === 0) io.stdout(`no tokens${tenant === undefined ? '' : ` for tenant ${tenant}`}\n`);
      for (const t of tokens) {
        const state = t.revokedAt === null ? 'live' : `revoked ${new Date(t.revokedAt).toISOString()}`;
        io.stdout(
          `${t.id}  ${t.kind.padEnd(8)}  ${t.tenant}  ${t.subject}  ${JSON.stringify(t.label)}  issued ${new Date(t.createdAt).toISOString()}  ${state}\n`,
        );
      }
      return 0;
    } finally {
      await store.close();
    }
  },
};
