import { z } from 'zod';
import { OperationContractError } from '../../engine/errors.js';
import type { AnyOperation } from '../../operation/define-operation.js';

/** A JSON Schema object for a tool's parameters (`type: 'object'` at the top). */
export interface JsonObjectSchema {
  readonly type: 'object';
  readonly properties: Record<string, object>;
  readonly required?: string[];
  readonly additionalProperties?: boolean;
  readonly [key: string]: unknown;
}

/**
 * The operation's request schema as JSON Schema (zod's `z.toJSONSchema`, input side), without the
 * `$schema` marker that some providers reject. This is what the model sees; the engine still
 * parses the model's request strictly with the zod schema itself, so the JSON Schema is advice to
 * the model, never the check.
 */
export function requestJsonSchema(operation: AnyOperation): JsonObjectSchema {
  if (!operation.request)
    throw new OperationContractError(operation.kind, 'cannot be a tool: it defines no request schema');
  const { $schema: _ignored, ...schema } = z.toJSONSchema(operation.request, {
    io: 'input',
    unrepresentable: 'any',
  }) as Record<string, unknown>;
  if (schema['type'] !== 'object') {
    throw new OperationContractError(operation.kind, 'cannot be a tool: its request schema is not an object');
  }
  return { properties: {}, ...schema, type: 'object' };
}
