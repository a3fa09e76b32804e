import { z } from 'zod';
import { ConfigurationError } from '../../canonical/errors.js';
import type { Engine } from '../../engine/create-engine.js';
import type { ReadResult } from '../../engine/read.js';
import type { AnyReadTool } from '../../operation/define-read-tool.js';
import { type AgentBinding, type BindingSource, checkBinding } from './agent-binding.js';
import type { JsonObjectSchema } from './request-json-schema.js';

/**
 * What a read tool hands back to the model: the result as JSON text, or the refusal with the
 * reason code and text the model can act on.
 */
export type ReadReply =
  | { readonly kind: 'read'; readonly text: string; readonly result: unknown; readonly readId: string }
  | {
      readonly kind: 'invalid_request';
      readonly reason: Extract<ReadResult, { kind: 'invalid_request' }>['reason'];
      readonly text: string;
    }
  | {
      /** The agent read more than its budget allows this minute: nothing was read. */
      readonly kind: 'rate_limited';
      readonly reason: 'rate_limited';
      readonly retryAfterMs: number;
      readonly text: string;
    }
  | {
      /** The tenant's audit chain needs an operator's repair: the result is withheld. */
      readonly kind: 'corrupt_audit_chain';
      readonly reason: 'corrupt_audit_chain';
      readonly text: string;
    };

/**
 * One registered read tool as a framework-neutral tool: its name, description and input as JSON
 * Schema (what the model sees), and `read`, which calls `engine.reads.run` with the binding's tenant,
 * section, run and agent — never with anything the model sent besides the input.
 */
export interface ReadToolHandle<Context = undefined> {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonObjectSchema;
  /** True when the input parses through the tool's strict schema (a cheap pre-check; `read` decides). */
  accepts(input: unknown): boolean;
  /** Reads for the binding (a function binding is given the framework's per-run `context`). */
  read(input: unknown, context: Context): Promise<ReadReply>;
}

/** Options of every adapter's read-tool builder. */
export interface ReadToolOptions {
  /** Only these read tools (by name) become tools; default every read tool registered with the engine. */
  readonly tools?: readonly string[];
}

/** A read tool's input as JSON Schema, without the `$schema` marker some providers reject. */
export function readInputJsonSchema(tool: AnyReadTool): JsonObjectSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.input, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  return { properties: {}, ...schema, type: 'object' };
}

/** Turns an engine read result into the tool's reply. */
export function toReadReply(result: ReadResult): ReadReply {
  if (result.kind === 'read') {
    return {
      kind: 'read',
      text: JSON.stringify(result.result ?? null),
      result: result.result,
      readId: result.readId,
    };
  }
  if (result.kind === 'corrupt_audit_chain')
    return { kind: 'corrupt_audit_chain', reason: result.reason, text: result.modelMessage };
  if (result.kind === 'rate_limited')
    return {
      kind: 'rate_limited',
      reason: result.reason,
      retryAfterMs: result.retryAfterMs,
      text: result.modelMessage,
    };
  return { kind: 'invalid_request', reason: result.reason, text: result.modelMessage };
}

/**
 * Builds the framework-neutral read tools of an engine. The binding is the same one the proposal
 * tools take: fixed (checked here, at build time) or a function of the framework's per-run context
 * (checked at each call). Its `resource` does not apply to reads.
 */
export function readToolHandles<Context = undefined>(
  engine: Engine,
  source: BindingSource<Context>,
  options: ReadToolOptions = {},
): ReadToolHandle<Context>[] {
  const fixed = typeof source === 'function' ? undefined : checkBinding(source);
  const bindingFor = (context: Context): AgentBinding =>
    fixed ?? checkBinding((source as (c: Context) => AgentBinding)(context));
  const wanted = options.tools ?? [...engine.readTools.keys()];
  return wanted.map((name) => {
    const tool = engine.readTools.get(name);
    if (!tool) throw new ConfigurationError(`read tools: "${name}" is not registered with the engine`);
    return Object.freeze({
      name: tool.name,
      description: tool.description,
      parameters: readInputJsonSchema(tool),
      accepts: (input: unknown) => tool.input.safeParse(input).success,
      read: async (input: unknown, context: Context) => {
        const binding = bindingFor(context);
        return toReadReply(
          await engine.reads.run(tool.name, input, {
            tenant: binding.tenant,
            section: binding.section ?? null,
            agent: binding.agent,
            runId: binding.runId,
          }),
        );
      },
    });
  });
}
