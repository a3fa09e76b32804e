import assert from 'node:assert/strict';
import { formatScopeChange } from '../canonical/scope-diff.js';
import { idempotencyKeyOf } from '../engine/ids.js';
import {
  type ApprovedScope,
  authorizeExecution,
  type ExecutionDecision,
} from '../operation/authorize-execution.js';
import type {
  AnyOperation,
  CommandMeta,
  DefiniteFailure,
  ExecuteContext,
  LocalTransaction,
  ProposalFacts,
} from '../operation/define-operation.js';
import { formatIssues } from '../operation/issues.js';
import type { SqlQuery } from '../sql/sql.js';
import {
  type ArgumentsOf,
  approvedScopeOf,
  erased,
  type KitOperation,
  kitFacts,
  type SuiteCase,
  TestingKitError,
} from './mutation-suite.js';

/** A fake of the downstream system that records every call the adapter makes, in order. */
export interface FakeTransport<Call = unknown> {
  /** Every call received so far, oldest first. */
  calls(): readonly Call[];
}

/** A fake transport your fake client writes into: `transport.record({ method: 'send', body })`. */
export interface RecordingTransport<Call = unknown> extends FakeTransport<Call> {
  record(call: Call): void;
}

/** Records calls in memory. Wire your fake client (or a fake provider's methods) to `record`. */
export function recordingTransport<Call = unknown>(): RecordingTransport<Call> {
  const calls: Call[] = [];
  return {
    record: (call) => {
      calls.push(structuredClone(call));
    },
    calls: () => [...calls],
  };
}

/** One SQL statement a local effect ran (a `sql` tag query as SQLite text: `?` placeholders). */
export interface RecordedStatement {
  readonly sql: string;
  readonly params: readonly unknown[];
}

/**
 * A fake store transaction for `local` effects: records every statement (minus those matching
 * `ignore`, e.g. `/^CREATE TABLE/`), answers `run` with one change and `all` with no rows.
 */
export function recordingTransaction(
  options: { readonly ignore?: RegExp } = {},
): LocalTransaction & FakeTransport<RecordedStatement> {
  const calls: RecordedStatement[] = [];
  const keep = (query: SqlQuery | string, given: readonly unknown[] | undefined) => {
    const { text: sql, values: params } =
      typeof query === 'string' ? { text: query, values: given } : query.render('sqlite');
    if (!options.ignore?.test(sql.trim())) calls.push({ sql, params: structuredClone([...(params ?? [])]) });
  };
  return {
    run: async (sql, params) => {
      keep(sql, params);
      return { changes: 1 };
    },
    all: async (sql, params) => {
      keep(sql, params);
      return [];
    },
    calls: () => [...calls],
  };
}

/** The identities of one contract run, for expected calls that carry them (an idempotency key, a command id). */
export interface ContractIds {
  readonly tenant: string;
  readonly proposalId: string;
  readonly attemptId: string;
  readonly attemptNumber: number;
  readonly idempotencyKey: string;
  /** The command ids issued, in order. */
  readonly commandIds: readonly string[];
}

/** One accepted operation and the downstream calls it must make. */
export interface AdapterCase<Args, Call> {
  readonly name: string;
  /** The approved arguments. */
  readonly arguments: Args;
  /** The calls the fake transport must have recorded, in order (compared with deep strict equality). */
  readonly expected: readonly Call[] | ((ids: ContractIds) => readonly Call[]);
  readonly facts?: Partial<ProposalFacts>;
}

/** Options of {@link adapterContract}. */
export interface AdapterContractOptions {
  /**
   * The transaction a `local` effect writes in. Defaults to the transport itself when it is one
   * (see {@link recordingTransaction}).
   */
  readonly transaction?: LocalTransaction;
}

/** The kit's stand-in for the engine's refusal: the guard denied the command, no command exists. */
class GuardRefusal extends Error {
  constructor(readonly decision: Extract<ExecutionDecision, { kind: 'denied' }>) {
    super(decision.message);
  }
}

function isDefiniteFailure(value: unknown): value is DefiniteFailure {
  return (
    typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'definite_failure'
  );
}

function isLocalTransaction(value: unknown): value is LocalTransaction {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as LocalTransaction).run === 'function' &&
    typeof (value as LocalTransaction).all === 'function'
  );
}

/**
 * Adapter contract tests: proves each accepted operation maps to the expected downstream call.
 * Each case freezes the approved scope of its arguments, runs the operation's `execute` with a
 * context whose `command(request, call)` goes through the same guard as the engine (the
 * requested scope rebuilt from the real request by `commandScope`, else `toScope`, checked by
 * `authorizeExecution` against the approved scope), and asserts that the fake transport recorded
 * exactly the expected calls, each made inside a command. An adapter that sends when the approved
 * scope said draft fails here, though its approved and requested scopes match.
 *
 * @throws {TestingKitError} when the operation has no executor or a case's arguments are invalid.
 *
 * @example
 * const transport = recordingTransport<{ method: string; to: string[] }>();
 * const send = messageOperation({ client: fakeClient(transport) });
 * for (const c of adapterContract(send, transport, [{
 *   name: 'a draft is saved, never sent',
 *   arguments: { channel: 'email', recipients: ['ada@acme.test'], attachments: [], mode: 'draft' },
 *   expected: [{ method: 'draft', to: ['ada@acme.test'] }],
 * }])) it(c.name, c.run);
 */
export function adapterContract<Op extends KitOperation, Call>(
  kitOperation: Op,
  transport: FakeTransport<Call>,
  cases: readonly AdapterCase<ArgumentsOf<Op>, Call>[],
  options: AdapterContractOptions = {},
): SuiteCase[] {
  const operation = erased(kitOperation);
  const execute = operation.execute;
  if (!execute)
    throw new TestingKitError(`${operation.kind}: adapterContract needs an operation with execute`);
  const transaction = options.transaction ?? (isLocalTransaction(transport) ? transport : undefined);
  return cases.map((c, index) => {
    const facts = kitFacts(operation, c.facts);
    const approval = approvedScopeOf(operation, c.arguments, facts);
    const args = operation.arguments ? operation.arguments.parse(c.arguments) : c.arguments;
    return {
      name: `${c.name} (${operation.kind} → expected downstream call)`,
      run: async () => {
        const ids = contractIds(facts, index);
        const run = await runExecutor(operation, execute, approval, args, facts, ids, transport, transaction);
        const expected =
          typeof c.expected === 'function' ? c.expected({ ...ids, commandIds: run.commandIds }) : c.expected;
        assert.deepStrictEqual(
          run.calls,
          expected,
          `${operation.kind}: "${c.name}": the adapter's downstream calls differ from the expected ones (the approved scope and the request matched; the adapter maps them to another effect)`,
        );
      },
    };
  });
}

function contractIds(facts: ProposalFacts, index: number): ContractIds {
  const proposalId = `prp_adaptercontract${index + 1}`;
  return {
    tenant: facts.tenant,
    proposalId,
    attemptId: `att_adaptercontract${index + 1}`,
    attemptNumber: 1,
    idempotencyKey: idempotencyKeyOf(proposalId, 1),
    commandIds: [],
  };
}

async function runExecutor<Call>(
  operation: AnyOperation,
  execute: NonNullable<AnyOperation['execute']>,
  approval: ApprovedScope,
  args: unknown,
  facts: ProposalFacts,
  ids: ContractIds,
  transport: FakeTransport<Call>,
  transaction: LocalTransaction | undefined,
): Promise<{ calls: readonly Call[]; commandIds: string[] }> {
  const before = transport.calls().length;
  const commandIds: string[] = [];
  const windows: [number, number][] = [];
  // Kept outside the executor's reach: an executor that swallows the refusal still fails the case.
  let refusal: GuardRefusal | undefined;
  let secondCommand = false;
  const command: ExecuteContext['command'] = async (request, call) => {
    if (operation.effect === 'external' && commandIds.length > 0) {
      secondCommand = true;
      throw new Error('an external executor makes exactly one command per attempt');
    }
    const raw = operation.commandScope
      ? operation.commandScope(request as never, facts)
      : operation.toScope(request, facts);
    const decision = authorizeExecution(approval, raw);
    if (decision.kind === 'denied') {
      refusal = new GuardRefusal(decision);
      throw refusal;
    }
    const meta: CommandMeta = {
      commandId: `${ids.proposalId.replace('prp_', 'cmd_')}_${commandIds.length + 1}`,
      idempotencyKey: ids.idempotencyKey,
    };
    commandIds.push(meta.commandId);
    const start = transport.calls().length;
    try {
      return await call(request, meta);
    } finally {
      windows.push([start, transport.calls().length]);
    }
  };
  const context: ExecuteContext = {
    ...facts,
    proposalId: ids.proposalId,
    attemptId: ids.attemptId,
    attemptNumber: ids.attemptNumber,
    idempotencyKey: ids.idempotencyKey,
    transaction: operation.effect === 'local' ? transaction : undefined,
    command,
    fail: (message: string) => ({ kind: 'definite_failure', message }),
  };
  let result: unknown;
  let thrown: unknown;
  try {
    result = await execute(args, context);
  } catch (error) {
    thrown = error;
  }
  if (refusal) {
    const d = refusal.decision;
    const detail = d.diff.length > 0 ? d.diff.map(formatScopeChange).join('; ') : formatIssues(d.issues);
    assert.fail(
      `${operation.kind}: the command guard refused the adapter's request as ${d.reason}: ${detail || d.message}. The request it sends is not the approved scope.`,
    );
  }
  if (secondCommand)
    assert.fail(
      `${operation.kind}: an external executor makes exactly one command per attempt; this one tried a second`,
    );
  if (thrown !== undefined) throw thrown;
  if (isDefiniteFailure(result))
    assert.fail(`${operation.kind}: the executor reported a definite failure: ${result.message}`);
  const all = transport.calls();
  const calls = all.slice(before);
  for (let i = before; i < all.length; i++) {
    if (!windows.some(([start, end]) => i >= start && i < end)) {
      assert.fail(
        `${operation.kind}: downstream call #${i - before + 1} was made outside ctx.command: no command (and no guard) covers it`,
      );
    }
  }
  if (operation.effect === 'external' && commandIds.length === 0) {
    assert.fail(`${operation.kind}: the external executor returned without a command`);
  }
  return { calls, commandIds };
}
