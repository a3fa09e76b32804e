import {
  PrincipalDirectory,
  type TokenInfo,
  type TokenSelector,
} from '../../server/directory/principal-directory.js';
import { type Command, UsageProblem } from '../command.js';
import { openCliStore, STORE_OPTIONS, sealKeyFromEnv, storeOptionsHelp } from '../store-option.js';

const named = (t: TokenInfo) =>
  `${t.id} (${t.kind} ${t.subject}, tenant ${t.tenant}, ${JSON.stringify(t.label)})`;

/** What the one argument names: a token id, the secret itself (`-`: read from stdin), or a principal. */
async function selectorOf(argument: string, stdin: () => Promise<string>): Promise<TokenSelector> {
  if (argument === '-') {
    const secret = (await stdin()).trim();
    if (secret === '') throw new UsageProblem('-: expected the token on stdin');
    return { secret };
  }
  if (/^cs_(agent|op)_/.test(argument))
    throw new UsageProblem(
      'a token secret on the command line lands in shell history and process lists: pipe it in with "-", or pass its id from `countersign token list`',
    );
  if (argument.startsWith('tok_')) {
    if (!/^tok_[0-9a-f]{16}$/.test(argument))
      throw new UsageProblem(
        `${argument}: a token id is tok_ and 16 hex digits (see countersign token list)`,
      );
    return { id: argument };
  }
  if (argument.startsWith('agent:') || argument.includes('@')) return { principal: argument };
  throw new UsageProblem(
    `${argument}: expected a token id (tok_…), a principal (agent:<tenant>-<agent>, user:<email> or an email), or - for the token on stdin`,
  );
}

/** `countersign token revoke`: revokes an agent's or an operator's API token, audited. */
export const tokenRevokeCommand: Command = {
  path: ['token', 'revoke'],
  summary: "revoke an agent's or operator's API token (by id, by principal, or the token on stdin)",
  help: `Usage: countersign token revoke (--db FILE | --store LOCATION) <token-id | principal | ->

Revokes API tokens in the store the server uses; from then on the server answers them 401
unauthenticated (it checks every request against the store, so no restart is needed).

  tok_…                    one token, by the id \`countersign token list\` prints
  agent:<tenant>-<agent>   every live token of that agent, e.g. agent:acme-assistant
  user:<email> | <email>   every live API token of that operator (console sessions are separate)
  -                        the token itself, read from stdin (never put a secret in argv)

${storeOptionsHelp(27, 'an existing SQLite file')}

Each revoked token is recorded in its tenant's audit chain (step "revoked", actor system:cli),
sealed when COUNTERSIGN_SEAL_KEY is set. Exit 0 when something was revoked, 1 when nothing
live matched or a tenant's audit chain holds an event countersign did not write (nothing is
revoked then: corrupt_audit_chain), 2 on bad input.`,
  options: { ...STORE_OPTIONS },
  positionals: { min: 1, max: 1 },
  async run(args, io) {
    const selector = await selectorOf(args.positionals[0]!, io.stdin);
    const store = await openCliStore(args);
    try {
      const directory = new PrincipalDirectory(store);
      await directory.migrate();
      const result = await directory.revokeTokens(selector, {
        actor: 'system:cli',
        sealKey: sealKeyFromEnv(),
      });
      switch (result.kind) {
        case 'revoked':
          for (const t of result.tokens) io.stdout(`revoked ${named(t)}\n`);
          return 0;
        case 'already_revoked':
          io.stderr(
            `${named(result.token)} was already revoked at ${new Date(result.token.revokedAt ?? 0).toISOString()}\n`,
          );
          return 1;
        case 'not_found':
          io.stderr(
            `no live token matches ${'secret' in selector ? 'the token read from stdin' : args.positionals[0]}\n`,
          );
          return 1;
        case 'corrupt_audit_chain':
          io.stderr(
            `nothing was revoked: the audit chain of tenant ${result.tenant} holds an event countersign did not write (corrupt_audit_chain); \`countersign audit verify\` names it, and an operator must repair it first\n`,
          );
          return 1;
      }
    } finally {
      await store.close();
    }
  },
};
