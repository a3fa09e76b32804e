import { z } from 'zod';
import { CountersignError } from '../canonical/errors.js';
import type { FieldRules } from '../canonical/scope-diff.js';
import type { Localizer } from '../i18n/localizer.js';
import type { Actor } from './actor.js';
import {
  type HandbackText,
  handbackDefinitionProblem,
  localizedHandback,
  type WrittenHandback,
  writeHandback,
} from './localized-handback.js';
import type { Outcome } from './outcome.js';
import type { SqlQuery } from '../sql/sql.js';

/** `local` effects commit in the same transaction as their outcome; `external` ones call a provider. */
export type Effect = 'local' | 'external';

/** Facts the server owns about a proposal, handed to `prepare` and used to build the scope. */
export interface ProposalFacts {
  readonly tenant: string;
  readonly section: string | null;
  readonly resource: string;
  readonly requestedBy: string;
  readonly runId: string;
  readonly operation: string;
}

/** A safe validation message for the model: it can correct its request within the same run. */
export interface Rejection {
  readonly kind: 'rejected';
  readonly modelMessage: string;
}

/** What `prepare` returns on success: the typed arguments and the typed preview, from the same facts. */
export interface Prepared<Args, Preview> {
  readonly arguments: Args;
  readonly preview: Preview;
}

/**
 * Context for `prepare`: the server-owned facts and a way to refuse with safe text. For an
 * operation that names its own resource, `resource` is the caller's label (or null): the stored
 * resource is derived from the arguments `prepare` returns.
 */
export interface PrepareContext extends Omit<ProposalFacts, 'resource'> {
  readonly resource: string | null;
  /** Refuse the request with text the model may read. Never include secrets. */
  reject(modelMessage: string): Rejection;
}

/** The result of `revalidate`: still valid, or a safe reason why a new proposal is needed. */
export type Revalidation =
  | { readonly kind: 'valid' }
  | { readonly kind: 'revision_required'; readonly reason: string };

/** Context for `revalidate`. */
export interface RevalidateContext extends ProposalFacts {
  readonly proposalId: string;
  valid(): Revalidation;
  revisionRequired(reason: string): Revalidation;
}

/** A statement made by an executor that a provider definitively refused: nothing happened. */
export interface DefiniteFailure {
  readonly kind: 'definite_failure';
  readonly message: string;
}

/** Context for `execute`. External calls must go through {@link ExecuteContext.command}. */
export interface ExecuteContext extends ProposalFacts {
  readonly proposalId: string;
  readonly attemptId: string;
  readonly attemptNumber: number;
  /** Derived from proposal id + attempt number: pass it to the provider on every external call. */
  readonly idempotencyKey: string;
  /**
   * For `local` effects: the store's open transaction, in which the outcome will also commit.
   * `undefined` for external effects.
   */
  readonly transaction: LocalTransaction | undefined;
  /**
   * The command guard. Rebuilds the requested scope from the real downstream request (through the
   * operation's `commandScope`), checks it against the approved scope, and only then creates a
   * command id and makes the call. A mismatch throws and no command exists.
   */
  command<C, R>(request: C, call: (request: C, meta: CommandMeta) => Promise<R> | R): Promise<R>;
  /** Report that the provider definitively refused (nothing happened): a terminal failure. */
  fail(message: string): DefiniteFailure;
}

/** Identity of one downstream call. */
export interface CommandMeta {
  readonly commandId: string;
  readonly idempotencyKey: string;
}

/**
 * The slice of a store transaction a local executor may use to write its effect. Write each
 * statement once with the `sql` tag (values become parameters; it runs on every SQL backend), or
 * pass text in the backend's own dialect (`?` placeholders on SQLite, `$1…$n` on PostgreSQL) with
 * its `params`.
 *
 * @example
 * await ctx.transaction!.run(sql`INSERT INTO notes (id, body) VALUES (${id}, ${body})`);
 */
export interface LocalTransaction {
  run(sql: SqlQuery | string, params?: readonly unknown[]): Promise<{ readonly changes: number }>;
  all(sql: SqlQuery | string, params?: readonly unknown[]): Promise<readonly Record<string, unknown>[]>;
}

/** What `reconcile` is given: the attempt left without an outcome. */
export interface ReconcileAttempt<Args> {
  readonly proposalId: string;
  readonly attemptId: string;
  readonly attemptNumber: number;
  readonly idempotencyKey: string;
  readonly arguments: Args;
}

/** The authoritative answer of the provider about one attempt. */
export type Reconciliation<Result> =
  | { readonly kind: 'succeeded'; readonly result: Result }
  | { readonly kind: 'not_found'; readonly message: string }
  | { readonly kind: 'pending' };

/**
 * What an external operation's provider promises about repeated calls. `idempotency_key`: a second
 * call with the same idempotency key (and the same request) returns the first call's result and does
 * nothing again, as payment providers do. `none` (the default): a repeated call may repeat the effect.
 */
export interface ProviderTraits {
  readonly deduplicates: 'idempotency_key' | 'none';
}

/** Every part of one operation, defined in one place. Only `kind`, `scopeVersion` and `scope` are required. */
export interface OperationDefinition<
  ScopeSchema extends z.ZodType,
  RequestSchema extends z.ZodType,
  ArgsSchema extends z.ZodType,
  Preview,
  Result,
  Kind extends string = string,
> {
  /** e.g. `invoice.pay`. Unique within an engine; its literal type names the operation in a typed engine. */
  readonly kind: Kind;
  /** The version of the scope this code produces. */
  readonly scopeVersion: number;
  /** Versions this code can still approve and execute; defaults to `[scopeVersion]`. */
  readonly supportedScopeVersions?: readonly number[];
  /** The typed, strict scope: the authorization-relevant fields. */
  readonly scope: ScopeSchema;
  /**
   * Set fields, redaction and emphasis (`highImpact`), keyed by field pattern (`recipients`,
   * `customer.id`). The patterns apply to the scope and to the preview alike.
   */
  readonly fields?: FieldRules;
  /** Version of the preview (the view model a human reviews). */
  readonly viewVersion?: number;
  /**
   * The schema of the preview `prepare` returns. Its object shape's key order is the order the
   * review page shows the preview's fields in; every preview is checked against it when the
   * proposal is made (a preview that does not match is a bug: the proposal is not made). Without
   * it, the page orders the fields by `fields`, then `arguments`, then `scope`.
   */
  readonly preview?: z.ZodType;
  readonly effect?: Effect;
  /** `low` operations may run in shadow mode; everything else is `high`. */
  readonly impact?: 'high' | 'low';
  /**
   * Shadow mode, for `impact: 'low'` operations only (read-only or sandbox traffic while owners
   * remove volatile fields): a command guard mismatch is computed, logged and audited as
   * `shadow_mismatch`, and the call goes ahead. Never for payments, deletions or messages.
   */
  readonly shadow?: boolean;
  /** How long a proposal stays approvable: `30m`, `2h`, `1d`, or milliseconds. */
  readonly expiresIn?: string | number;
  /**
   * Whether a chat message (Slack) may carry Approve and Decline buttons for this operation's
   * proposals (default true). `false` when its preview cannot be shown whole in a message (a long
   * document, many recipients): its card then offers only "Open in console".
   */
  readonly chatApproval?: boolean;
  /** What the model may say. Strict: unknown keys are an error the model can correct. */
  readonly request?: RequestSchema;
  /** What execution needs, built by the application. */
  readonly arguments?: ArgsSchema;
  /** Request fields an operator may change in an edit (re-run through `prepare`, a new freeze). */
  readonly editable?: readonly string[];
  /**
   * Names the resource a proposal acts on from its own typed arguments, e.g.
   * `(a) => \`invoice:${a.invoice_id}\``. The stored resource is then this derived name, never a
   * label the agent sends (a label that disagrees is refused as `resource_mismatch`), and grants
   * bounded to a resource can cover the operation. Without it, grants cannot cover the operation.
   */
  readonly resource?: (args: z.output<ArgsSchema>) => string;
  /**
   * Lets the operator who edited a proposal approve the new one. Off by default (four eyes: the
   * proposer and the editor never approve); each use is audited.
   */
  readonly allowEditorApproval?: boolean;
  /**
   * Who must approve: statically, or from the typed arguments, e.g.
   * `(a) => a.amount_minor >= 1_000_000 ? { required: 2, roles: ['approver'] } : { required: 1 }`.
   * Resolved once when the proposal is made and frozen into its contract digest: a later change of
   * this policy never changes what an existing proposal needs. Default `{ required: 1 }`.
   */
  readonly approvals?: ApprovalPolicy | ((args: z.output<ArgsSchema>) => ApprovalPolicy);
  /** Builds the scope from arguments; defaults to `{ tenant, operation, ...arguments }`. */
  readonly toScope?: (args: z.output<ArgsSchema>, facts: ProposalFacts) => unknown;
  /** Resolves defaults and derived values from server-owned state. */
  readonly prepare?: (
    request: z.output<RequestSchema>,
    ctx: PrepareContext,
  ) => Promise<Prepared<z.output<ArgsSchema>, Preview> | Rejection>;
  /** Whether this operator may approve this scope. Roles are checked by the caller's policy too. */
  readonly authorize?: (actor: Actor, scope: z.output<ScopeSchema>) => boolean;
  /** Checks current state before executing; a changed fact means a new proposal. */
  readonly revalidate?: (args: z.output<ArgsSchema>, ctx: RevalidateContext) => Promise<Revalidation>;
  /**
   * Builds the raw requested scope from a real downstream request, for the command guard. It must
   * carry every field of the request (rename what differs, spread the rest): an option the reviewer
   * never saw then fails closed as `invalid_requested_scope`. Defaults to `toScope(request)`.
   */
  readonly commandScope?: (request: never, facts: ProposalFacts) => unknown;
  /** Performs the effect. External calls go through `ctx.command`. */
  readonly execute?: (args: z.output<ArgsSchema>, ctx: ExecuteContext) => Promise<Result | DefiniteFailure>;
  /**
   * For `external` effects: whether the provider deduplicates by idempotency key. With
   * `{ deduplicates: 'idempotency_key' }`, an attempt whose worker stopped after its command was
   * recorded is taken over by re-sending that command with the same idempotency key (the executor
   * runs again with the approved arguments, the command guard checks the request against the
   * approved scope again, revalidation is not repeated: the command was already issued), instead of
   * going to `needs_reconciliation`. Declare it only when the provider really returns the first
   * result for a repeated key. Default `{ deduplicates: 'none' }`.
   *
   * @example
   * provider: { deduplicates: 'idempotency_key' },
   * execute: (a, ctx) => ctx.command(req(a), (r, meta) => payments.pay(r, { idempotencyKey: meta.idempotencyKey })),
   */
  readonly provider?: ProviderTraits;
  /** Looks an attempt up by its idempotency key at the provider. Required for external effects. */
  readonly reconcile?: (attempt: ReconcileAttempt<z.output<ArgsSchema>>) => Promise<Reconciliation<Result>>;
  /**
   * Safe text for the next model turn and the API: `(outcome, text) => …`, where `text` has the
   * locale asked for and formats money and dates with `Intl`; or per language `{ en, de, fr }`.
   */
  readonly handback?: HandbackText<Result>;
}

/**
 * A defined operation: the definition, frozen, with defaults applied. Type parameters carry the
 * typed scope, request, arguments, preview, result and kind (its literal, e.g. `'invoice.pay'`)
 * through the engine.
 */
export interface Operation<
  Scope = unknown,
  Request = unknown,
  Args = unknown,
  Preview = unknown,
  Result = unknown,
  Kind extends string = string,
> {
  readonly kind: Kind;
  readonly scopeVersion: number;
  readonly supportedScopeVersions: readonly number[];
  readonly scope: z.ZodType<Scope>;
  readonly fields: FieldRules;
  readonly viewVersion: number;
  /** See {@link OperationDefinition.preview}. */
  readonly preview: z.ZodType | undefined;
  readonly effect: Effect;
  /** See {@link OperationDefinition.provider}. */
  readonly provider: ProviderTraits;
  readonly impact: 'high' | 'low';
  readonly shadow: boolean;
  readonly expiresInMs: number;
  /** See {@link OperationDefinition.chatApproval}. */
  readonly chatApproval: boolean;
  readonly request: z.ZodType<Request> | undefined;
  readonly arguments: z.ZodType<Args> | undefined;
  readonly editable: readonly string[];
  /** See {@link OperationDefinition.allowEditorApproval}. */
  readonly allowEditorApproval: boolean;
  /** The approval policy of a proposal with these arguments (see {@link OperationDefinition.approvals}). */
  approvalsOf(args: Args): FrozenApprovalPolicy;
  /** The resource derived from the arguments, when the operation names its own. */
  resourceOf?(args: Args): string;
  toScope(args: Args, facts: ProposalFacts): unknown;
  prepare?(request: Request, ctx: PrepareContext): Promise<Prepared<Args, Preview> | Rejection>;
  authorize(actor: Actor, scope: Scope): boolean;
  revalidate?(args: Args, ctx: RevalidateContext): Promise<Revalidation>;
  commandScope?(request: never, facts: ProposalFacts): unknown;
  execute?(args: Args, ctx: ExecuteContext): Promise<Result | DefiniteFailure>;
  reconcile?(attempt: ReconcileAttempt<Args>): Promise<Reconciliation<Result>>;
  /** The outcome as safe text, in the localizer's language (English without one). */
  handback(outcome: Outcome<Result>, text?: Localizer): string;
  /**
   * The outcome as safe text, and the language it came out in: the localizer's, or English when
   * the operation has no text in that language (see {@link writeHandback}).
   */
  writeHandback(outcome: Outcome<Result>, text: Localizer): WrittenHandback;
}

/** An operation of any types, as the engine holds them. */
// biome-ignore lint/suspicious/noExplicitAny: the engine is generic over every operation's types; each call re-parses through the operation's own schemas.
export type AnyOperation = Operation<any, any, any, any, any>;

/** Thrown for a definition that can never work (a bug in the caller's code, found at startup). */
export class OperationDefinitionError extends CountersignError {}

const DURATION = /^(\d+)(ms|s|m|h|d)$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Parses `30m`, `2h`, `1d`, `45s`, `500ms` (or a number of milliseconds) into milliseconds. */
export function parseDuration(value: string | number): number {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value <= 0)
      throw new OperationDefinitionError(
        `expiresIn: ${value} is not a positive whole number of milliseconds`,
      );
    return value;
  }
  const match = DURATION.exec(value);
  if (!match)
    throw new OperationDefinitionError(`expiresIn: "${value}" is not a duration like 30m, 2h or 1d`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/**
 * Whether the default scope, `{ tenant, operation, ...arguments }`, can be the operation's scope:
 * every argument is a scope field (the scope is strict) and every required scope field is given,
 * with a type the field accepts. When it cannot, `toScope` is required, so an operation whose
 * arguments cannot produce its scope does not compile (rather than failing at its first `propose`).
 */
export type ScopeFromArguments<
  ScopeSchema extends z.ZodType,
  ArgsSchema extends z.ZodType,
  Kind extends string,
> = [ArgsSchema] extends [z.ZodNever]
  ? unknown
  : DefaultScopeFits<ScopeShape<ScopeSchema>, z.output<ArgsSchema>, Kind> extends true
    ? unknown
    : ScopeNeedsToScope<ArgsSchema>;

// What the scope schema accepts; its output where a schema declares no input type (`z.ZodType<T>`).
type ScopeShape<ScopeSchema extends z.ZodType> =
  unknown extends z.input<ScopeSchema> ? z.output<ScopeSchema> : z.input<ScopeSchema>;

// A kind known only as `string` proves nothing about a literal `operation` field: left unchecked.
type DefaultScopeFits<Scope, Args, Kind extends string> = [Exclude<keyof Args, keyof Scope>] extends [never]
  ? string extends Kind
    ? [{ tenant: string } & Args] extends [Omit<Scope, 'operation'>]
      ? true
      : false
    : [{ tenant: string; operation: Kind } & Args] extends [Scope]
      ? true
      : false
  : false;

/** What {@link ScopeFromArguments} requires when the arguments alone cannot build the scope. */
export interface ScopeNeedsToScope<ArgsSchema extends z.ZodType> {
  /**
   * Required here: the default scope `{ tenant, operation, ...arguments }` does not fit the scope
   * schema (an argument that is not a scope field, or a required scope field no argument gives).
   */
  readonly toScope: (args: z.output<ArgsSchema>, facts: ProposalFacts) => unknown;
}

/**
 * Defines one operation: everything about one kind of effect an assistant may propose, in one
 * object. The scope schema must be strict (unknown keys are an error, never stripped).
 *
 * @example
 * const payInvoice = defineOperation({
 *   kind: 'invoice.pay',
 *   scopeVersion: 1,
 *   scope: z.strictObject({ tenant: z.string(), operation: z.literal('invoice.pay'),
 *     invoice_id: z.string(), destination_account_id: z.string(),
 *     amount_minor: minorUnits(), currency: currencyCode() }),
 *   fields: { destination_account_id: { redact: last4 } },
 * });
 */
export function defineOperation<
  ScopeSchema extends z.ZodType,
  RequestSchema extends z.ZodType = z.ZodNever,
  ArgsSchema extends z.ZodType = z.ZodNever,
  Preview = unknown,
  Result = unknown,
  Kind extends string = string,
>(
  definition: OperationDefinition<ScopeSchema, RequestSchema, ArgsSchema, Preview, Result, Kind> &
    ScopeFromArguments<ScopeSchema, ArgsSchema, Kind>,
): Operation<z.output<ScopeSchema>, z.output<RequestSchema>, z.output<ArgsSchema>, Preview, Result, Kind> {
  const d = definition;
  if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/.test(d.kind)) {
    throw new OperationDefinitionError(`kind: "${d.kind}" must be dotted lower-case words like invoice.pay`);
  }
  if (!Number.isSafeInteger(d.scopeVersion) || d.scopeVersion < 1) {
    throw new OperationDefinitionError(`${d.kind}: scopeVersion must be a positive integer`);
  }
  assertStrict(d.kind, 'scope', d.scope);
  if (d.request) assertStrict(d.kind, 'request', d.request);
  if (d.arguments) assertStrict(d.kind, 'arguments', d.arguments);
  const effect = d.effect ?? 'local';
  if (d.execute && effect === 'external' && !d.reconcile) {
    throw new OperationDefinitionError(
      `${d.kind}: an external effect needs reconcile (a lost response must be looked up, never retried)`,
    );
  }
  if (d.execute && (!d.prepare || !d.request || !d.arguments)) {
    throw new OperationDefinitionError(
      `${d.kind}: an executable operation needs request, arguments and prepare`,
    );
  }
  for (const field of d.editable ?? []) {
    if (d.request && d.request instanceof z.ZodObject && !(field in d.request.shape)) {
      throw new OperationDefinitionError(`${d.kind}: editable field "${field}" is not a request field`);
    }
  }
  const deduplicates = d.provider?.deduplicates ?? 'none';
  if (deduplicates !== 'none' && deduplicates !== 'idempotency_key')
    throw new OperationDefinitionError(
      `${d.kind}: provider.deduplicates must be 'idempotency_key' or 'none', not ${JSON.stringify(deduplicates)}`,
    );
  if (deduplicates === 'idempotency_key' && effect !== 'external')
    throw new OperationDefinitionError(
      `${d.kind}: provider.deduplicates is for external effects; a local effect commits with its outcome`,
    );
  if (d.shadow && d.impact !== 'low') {
    throw new OperationDefinitionError(
      `${d.kind}: shadow mode is only for impact: 'low' operations; a high-impact mismatch must be refused`,
    );
  }
  const moneyProblem = moneyRuleProblem(d.fields ?? {});
  if (moneyProblem) throw new OperationDefinitionError(`${d.kind}: ${moneyProblem}`);
  const handbackProblem = handbackDefinitionProblem(d.handback);
  if (handbackProblem) throw new OperationDefinitionError(`${d.kind}: ${handbackProblem}`);
  const supported = d.supportedScopeVersions ?? [d.scopeVersion];
  if (!supported.includes(d.scopeVersion)) {
    throw new OperationDefinitionError(
      `${d.kind}: supportedScopeVersions must include scopeVersion ${d.scopeVersion}`,
    );
  }
  // A static policy is checked once, here; one computed from the arguments when each proposal is made.
  const staticPolicy =
    typeof d.approvals === 'function' ? undefined : checkedPolicy(d.kind, d.approvals ?? { required: 1 });
  type Args = z.output<ArgsSchema>;
  const operation: Operation<z.output<ScopeSchema>, z.output<RequestSchema>, Args, Preview, Result, Kind> = {
    kind: d.kind,
    scopeVersion: d.scopeVersion,
    supportedScopeVersions: Object.freeze([...supported]),
    scope: d.scope as z.ZodType<z.output<ScopeSchema>>,
    fields: Object.freeze({ ...(d.fields ?? {}) }),
    viewVersion: d.viewVersion ?? 1,
    preview: d.preview,
    effect,
    provider: Object.freeze({ deduplicates }),
    impact: d.impact ?? 'high',
    shadow: d.shadow ?? false,
    expiresInMs: parseDuration(d.expiresIn ?? '30m'),
    chatApproval: d.chatApproval ?? true,
    request: d.request as z.ZodType<z.output<RequestSchema>> | undefined,
    arguments: d.arguments as z.ZodType<Args> | undefined,
    editable: Object.freeze([...(d.editable ?? [])]),
    allowEditorApproval: d.allowEditorApproval ?? false,
    approvalsOf: (args: Args) =>
      staticPolicy ?? checkedPolicy(d.kind, (d.approvals as (a: Args) => ApprovalPolicy)(args)),
    ...(d.resource ? { resourceOf: d.resource } : {}),
    toScope:
      d.toScope ??
      ((args: Args, facts: ProposalFacts) => ({
        tenant: facts.tenant,
        operation: facts.operation,
        ...(args as object),
      })),
    authorize: d.authorize ?? (() => true),
    ...(d.prepare ? { prepare: d.prepare } : {}),
    ...(d.revalidate ? { revalidate: d.revalidate } : {}),
    ...(d.commandScope ? { commandScope: d.commandScope } : {}),
    ...(d.execute ? { execute: d.execute } : {}),
    ...(d.reconcile ? { reconcile: d.reconcile } : {}),
    handback: localizedHandback(d.handback, d.fields),
    writeHandback: (outcome: Outcome<Result>, text: Localizer) =>
      writeHandback(d.handback, outcome, text, d.fields),
  };
  return Object.freeze(operation);
}

/**
 * Who must approve a proposal: `required` distinct eligible approvers (never the proposer or the
 * editor), each holding one of `roles` when roles are given.
 */
export interface ApprovalPolicy {
  /** How many distinct approvers must approve the same digest, 1 to 10. */
  readonly required: number;
  /** When given, each approver must hold one of these roles (else `forbidden`). */
  readonly roles?: readonly string[];
}

/** A validated policy with roles sorted and deduplicated, as it is frozen into a proposal. */
export interface FrozenApprovalPolicy {
  readonly required: number;
  readonly roles: readonly string[];
}

function checkedPolicy(kind: string, policy: ApprovalPolicy): FrozenApprovalPolicy {
  if (!Number.isSafeInteger(policy?.required) || policy.required < 1 || policy.required > 10) {
    throw new OperationDefinitionError(`${kind}: approvals.required must be a whole number from 1 to 10`);
  }
  const roles = policy.roles ?? [];
  if (!Array.isArray(roles) || roles.some((r) => typeof r !== 'string' || r.length === 0)) {
    throw new OperationDefinitionError(`${kind}: approvals.roles must be non-empty role names`);
  }
  return { required: policy.required, roles: [...new Set(roles)].sort() };
}

// Unknown keys must be an error the model (or executor) can see, never silently stripped or merged.
function assertStrict(kind: string, part: string, schema: z.ZodType): void {
  if (schema instanceof z.ZodObject) {
    const catchall = schema.def.catchall;
    if (!catchall || !(catchall instanceof z.ZodNever)) {
      throw new OperationDefinitionError(
        `${kind}: the ${part} schema must be z.strictObject (unknown keys are an error)`,
      );
    }
  }
}

/** What is wrong with a `money` field rule, if anything (a fixed currency must be an ISO 4217 code). */
function moneyRuleProblem(fields: FieldRules): string | undefined {
  for (const [pattern, rule] of Object.entries(fields)) {
    const money: unknown = rule.money;
    if (money === undefined) continue;
    const where = `fields.${pattern}.money`;
    if (typeof money !== 'object' || money === null)
      return `${where} must be { currencyField } or { currency }`;
    const m = money as Record<string, unknown>;
    if ('currency' in m) {
      if (typeof m['currency'] !== 'string' || !/^[A-Z]{3}$/.test(m['currency']))
        return `${where}.currency must be an ISO 4217 code such as "USD"`;
    } else if (typeof m['currencyField'] !== 'string' || m['currencyField'] === '') {
      return `${where} must name the scope field holding the currency ({ currencyField: 'currency' }) or fix one ({ currency: 'USD' })`;
    }
  }
  return undefined;
}
