import { join, resolve } from 'node:path';
import { demoOperations, demoReadTools, demoWorld } from '../../demo/demo-world.js';
import { createEngine } from '../../engine/create-engine.js';
import { newId } from '../../engine/ids.js';
import type { AnyOperation } from '../../operation/define-operation.js';
import { PrincipalDirectory } from '../../server/directory/principal-directory.js';
import { loadServeConfig } from '../../server/serve-config.js';
import { approvalLink } from '../../server/server-origin.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';
import { type Command, requiredOption, stringOption, UsageProblem } from '../command.js';
import { loadOptional } from '../load-optional.js';
import {
  cliStoreLocation,
  demoFilesDir,
  refuseTwoStores,
  STORE_OPTIONS,
  sealKeyFromEnv,
  storeOptionsHelp,
} from '../store-option.js';

/** `countersign mcp`: the MCP server over stdio, as one agent of one tenant. */
export const mcpCommand: Command = {
  path: ['mcp'],
  summary:
    'serve the MCP server over stdio: propose_<kind> tools, get_proposal and read tools, as one agent of one tenant',
  help: `Usage: countersign mcp --tenant T --agent-token TOKEN [--db FILE | --store LOCATION]
                       [--config FILE | --demo] [--resource R] [--run-id ID]

Speaks MCP over stdin/stdout for one session (Claude Desktop, an IDE, your own client): one
propose_<kind> tool per operation (dots become underscores; the input schema is the operation's
request schema), get_proposal (status, outcome, handback) and the read tools of the config
(readOnlyHint; --demo: list_open_invoices), which read the session's tenant only. Proposing
never executes: operators
approve in the console (countersign serve on the same database). Logs go to stderr.

  --tenant T           the tenant the session works for; the token must belong to it
  --agent-token TOKEN  an agent token of that tenant (or set COUNTERSIGN_AGENT_TOKEN)
${storeOptionsHelp(23, 'the SQLite file (default ./countersign.db)')}
  --config FILE        an ES module exporting { operations, readTools?, store?, authentication? } (as for serve)
  --demo               the example operations, as countersign serve --demo registers them
  --resource R         the resource boundary of the session's proposals, e.g. invoice:* (default:
                       none; required for operations that do not name their own resource)
  --run-id ID          the run id of the session's proposals (default: a new one)

Environment: COUNTERSIGN_SEAL_KEY, the key countersign serve seals records with: give both the
same one, or the server refuses this session's proposals as not sealed by it.`,
  options: {
    ...STORE_OPTIONS,
    config: { type: 'string' },
    demo: { type: 'boolean' },
    tenant: { type: 'string' },
    'agent-token': { type: 'string' },
    resource: { type: 'string' },
    'run-id': { type: 'string' },
  },
  async run(args, io) {
    const tenant = requiredOption(args, 'tenant');
    const token = stringOption(args, 'agent-token') ?? process.env['COUNTERSIGN_AGENT_TOKEN'];
    if (!token) throw new UsageProblem('--agent-token TOKEN (or COUNTERSIGN_AGENT_TOKEN) is required');
    const sealKey = sealKeyFromEnv();
    const demo = args.values['demo'] === true;
    const location = cliStoreLocation(args);
    const configFile = stringOption(args, 'config');
    if (demo && configFile) throw new UsageProblem('pass --config FILE or --demo, not both');
    if (!demo && !configFile)
      throw new UsageProblem('nothing to serve: pass --config FILE with your operations, or --demo');
    const runId = stringOption(args, 'run-id') ?? newId('run');
    const resource = stringOption(args, 'resource');

    // Optional peer dependencies, loaded only by the command that uses them.
    const { pino } = await loadOptional('pino', 'countersign mcp', () => import('pino'));
    const { serveMcpStdio } = await loadOptional(
      '@modelcontextprotocol/sdk',
      'countersign mcp',
      () => import('../../adapters/mcp/serve-mcp-stdio.js'),
    );
    const logger = pino(
      { level: 'info', base: { service: 'countersign-mcp' } },
      { write: (line: string) => io.stderr(line) },
    );
    const config = configFile ? await loadServeConfig(configFile) : undefined;
    const configuredUrl = config?.authentication?.publicUrl;
    const publicUrl = configuredUrl ? new URL(configuredUrl).origin : undefined;
    await refuseTwoStores(location, config?.store);
    const db = resolve(location?.kind === 'sqlite' ? location.target : 'countersign.db');
    const store: Store =
      config?.store ?? (await openStore(location?.kind === 'sqlite' ? db : (location?.target ?? db)));
    // The journal countersign serve --demo keeps for the same store.
    const world = demo
      ? demoWorld({ journal: join(demoFilesDir(location).dir, 'countersign-demo-provider.jsonl') })
      : undefined;
    const operations: readonly AnyOperation[] = world ? demoOperations(world) : (config?.operations ?? []);
    const engine = await createEngine({
      store,
      operations,
      readTools: world ? demoReadTools(world) : (config?.readTools ?? []),
      logger,
      ...(config?.authentication?.approverRoles
        ? { approverRoles: config.authentication.approverRoles }
        : {}),
      ...(sealKey ? { sealKey } : {}),
    });
    try {
      const directory = new PrincipalDirectory(store);
      await directory.migrate();
      await config?.authentication?.setup?.(directory);
      const actor = await directory.authenticateBearer(token);
      if (actor?.kind !== 'agent') {
        io.stderr('countersign mcp: the agent token is not valid\n');
        return 2;
      }
      if (actor.tenant !== tenant) {
        io.stderr(`countersign mcp: the agent token does not belong to tenant ${tenant}\n`);
        return 2;
      }
      logger.info({ tenant, agent: actor.id, runId, resource }, 'mcp session over stdio');
      await serveMcpStdio(
        engine,
        {
          tenant,
          agent: actor.id,
          runId,
          ...(resource !== undefined ? { resource } : {}),
          // The token was checked once, above: a revoked one must also stop this running session.
          stillAuthenticated: async () => {
            const now = await directory.authenticateBearer(token);
            return now?.kind === 'agent' && now.id === actor.id && now.tenant === actor.tenant;
          },
        },
        {
          logger,
          ...(io.signal ? { signal: io.signal } : {}),
          // Where countersign serve shows the proposal, when the config names its public URL.
          ...(publicUrl
            ? { approvalUrl: (p: { id: string; runId: string }) => approvalLink(publicUrl, p) }
            : {}),
        },
      );
      return 0;
    } finally {
      await engine.close();
    }
  },
};
