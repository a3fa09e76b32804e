import type { DeepReadonly } from '../canonical/freeze.js';
import type { AnyOperation, Operation } from '../operation/define-operation.js';
import type { Outcome } from '../operation/outcome.js';
import type { ExecutionContract } from './execution-contract.js';
import type { Proposal } from './proposal.js';

/**
 * The operations an engine is created with. `createEngine({ operations: [payInvoice, refund] })`
 * keeps their literal kinds and types; `readonly AnyOperation[]` (the default everywhere) is an
 * engine whose kinds are known only at run time, typed as before (`string`, `unknown`).
 */
export type Operations = readonly AnyOperation[];

/**
 * `true` when every operation has a literal kind and there is at least one: a single `kind: string`
 * (an operation built from a runtime value) makes the whole engine untyped rather than half-typed.
 */
export type IsTyped<Ops extends Operations> = [Ops[number]['kind']] extends [never]
  ? false
  : string extends Ops[number]['kind']
    ? false
    : true;

/** The registered operation kinds, e.g. `'invoice.pay' | 'refund.create'`; `string` for an untyped engine. */
export type OperationKind<Ops extends Operations> = IsTyped<Ops> extends true ? Ops[number]['kind'] : string;

/** The registered operation of kind `K` (a union for a union of kinds). */
export type OperationOf<Ops extends Operations, K extends OperationKind<Ops>> = Extract<
  Ops[number],
  { readonly kind: K }
>;

// One operation's type arguments, by name.
type PartsOf<Op> =
  Op extends Operation<infer _Scope, infer Request, infer Args, infer Preview, infer Result, infer _Kind>
    ? { scope: _Scope; request: Request; args: Args; preview: Preview; result: Result }
    : never;

// Part `P` of each kind in `K`, as a union; `unknown` for an untyped engine (never `any`).
type PartOf<Ops extends Operations, K, P extends keyof PartsOf<AnyOperation>> =
  IsTyped<Ops> extends true
    ? K extends OperationKind<Ops>
      ? PartsOf<OperationOf<Ops, K>>[P]
      : never
    : unknown;

/** The request `propose` takes for kind `K`: the output of the operation's strict request schema. */
export type RequestOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> = PartOf<
  Ops,
  K,
  'request'
>;

/** The typed arguments `prepare` builds for kind `K`. */
export type ArgumentsOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> = PartOf<
  Ops,
  K,
  'args'
>;

/** The preview (view model) a human reviews for kind `K`. */
export type PreviewOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> = PartOf<
  Ops,
  K,
  'preview'
>;

/** The scope (the authorization-relevant fields) of kind `K`: what a grant may constrain. */
export type ScopeOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> = PartOf<
  Ops,
  K,
  'scope'
>;

/** The result `execute` returns for kind `K`. */
export type ResultOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> = PartOf<
  Ops,
  K,
  'result'
>;

/**
 * A proposal of one of the kinds `K` (all registered kinds by default): a union discriminated on
 * `operation`, so `if (p.operation === 'invoice.pay')` narrows its request, arguments, preview and
 * outcome. For an untyped engine, the plain {@link Proposal}.
 *
 * @example
 * const p = await engine.proposals.get('acme', id); // ProposalOf<[typeof payInvoice, typeof refund]> | undefined
 * if (p?.operation === 'invoice.pay') p.preview.amount; // the pay preview's fields only
 */
export type ProposalOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> =
  IsTyped<Ops> extends true
    ? K extends OperationKind<Ops>
      ? Proposal<
          DeepReadonly<ArgumentsOf<Ops, K>>,
          DeepReadonly<PreviewOf<Ops, K>>,
          ResultOf<Ops, K>,
          K,
          DeepReadonly<RequestOf<Ops, K>>
        >
      : never
    : Proposal;

/** The outcome of executing a proposal of kind `K`: a union of each kind's `Outcome<Result>`. */
export type OutcomeOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> =
  IsTyped<Ops> extends true ? (K extends OperationKind<Ops> ? Outcome<ResultOf<Ops, K>> : never) : Outcome;

/** A claimed contract of kind `K`, discriminated on `operation`, with that kind's arguments. */
export type ContractOf<Ops extends Operations, K extends OperationKind<Ops> = OperationKind<Ops>> =
  IsTyped<Ops> extends true
    ? K extends OperationKind<Ops>
      ? ExecutionContract<K, DeepReadonly<ArgumentsOf<Ops, K>>>
      : never
    : ExecutionContract;
