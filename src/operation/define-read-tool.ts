import { z } from 'zod';
import { OperationDefinitionError } from './define-operation.js';

/**
 * Who reads, for whom and in which run: chosen by the server (a token, a session, the
 * application's binding), never by the model. Every call of a read tool receives exactly these.
 */
export interface ReadScope {
  /** The tenant whose data may be read. Filter every query by it. */
  readonly tenant: string;
  /** The section within the tenant, when the application uses sections; else null. */
  readonly section: string | null;
  /** The agent principal that reads, e.g. `agent:acme-assistant`. */
  readonly actor: string;
  /** The agent run the read belongs to. */
  readonly runId: string;
}

/** One task-specific read tool, as written by the application. */
export interface ReadToolDefinition<InputSchema extends z.ZodType, Result> {
  /** The tool name the model sees: lower-case words joined by `_`, e.g. `list_open_invoices`. */
  readonly name: string;
  /** What the tool returns and when to use it, for the model. */
  readonly description: string;
  /**
   * What the model may send: a `z.strictObject` (an unknown key is `invalid_request`, never
   * stripped), every nested object strict too. It can never name a server-owned fact
   * ({@link SERVER_OWNED_FIELDS}): those reach `read` through its scope.
   */
  readonly input: InputSchema;
  /**
   * Reads the application's own records for the server-owned scope. Returns plain JSON data (the
   * model reads it as JSON); throw only for a bug or an I/O failure.
   */
  readonly read: (input: z.output<InputSchema>, scope: ReadScope) => Promise<Result> | Result;
}

/** A defined read tool: its definition, checked and frozen. */
export interface ReadTool<Input = unknown, Result = unknown> {
  readonly name: string;
  readonly description: string;
  readonly input: z.ZodType<Input>;
  read(input: Input, scope: ReadScope): Promise<Result> | Result;
}

/** A read tool of any types, as the engine holds them. */
// biome-ignore lint/suspicious/noExplicitAny: the engine holds tools of every input type; each call re-parses through the tool's own schema.
export type AnyReadTool = ReadTool<any, unknown>;

/**
 * Input field names that are server-owned facts, compared without case, `_` and `-`
 * (`tenant_id`, `tenantId` and `Tenant-ID` all match `tenantid`). A model that could send one of
 * these could ask for another tenant's data; such a field is a definition error at startup.
 */
export const SERVER_OWNED_FIELDS: readonly string[] = Object.freeze([
  'tenant',
  'tenantid',
  'section',
  'sectionid',
  'actor',
  'actorid',
  'agent',
  'agentid',
  'principal',
  'principalid',
  'requestedby',
  'run',
  'runid',
  'resource',
  'resourceid',
]);

const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
const RESERVED_NAMES = ['get_proposal'];

function normalized(field: string): string {
  return field.toLowerCase().replace(/[_-]/g, '');
}

/** True when `field` names a server-owned fact (see {@link SERVER_OWNED_FIELDS}). */
export function isServerOwnedField(field: string): boolean {
  return SERVER_OWNED_FIELDS.includes(normalized(field));
}

// Walks the model-facing JSON Schema: every property name at any depth (nested objects, array
// items, unions) is checked, and every object must refuse unknown keys.
function checkSchema(name: string, node: unknown, path: string): void {
  if (Array.isArray(node)) {
    for (const [i, child] of node.entries()) checkSchema(name, child, `${path}[${i}]`);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const schema = node as Record<string, unknown>;
  const properties = schema['properties'];
  if (typeof properties === 'object' && properties !== null) {
    for (const field of Object.keys(properties)) {
      if (isServerOwnedField(field)) {
        throw new OperationDefinitionError(
          `${name}: input field "${path}.${field}" is server-owned; the tenant, section, agent and run reach read() through its scope, never from the model`,
        );
      }
    }
    if (schema['additionalProperties'] !== false) {
      throw new OperationDefinitionError(
        `${name}: the input object at ${path} must be z.strictObject (unknown keys are an error)`,
      );
    }
    for (const [field, child] of Object.entries(properties)) checkSchema(name, child, `${path}.${field}`);
  }
  for (const [key, child] of Object.entries(schema)) {
    if (key !== 'properties') checkSchema(name, child, path);
  }
}

/**
 * Defines a task-specific read tool: the model chooses only `input`; the tenant, section, agent
 * and run come from the server through `read`'s scope. The input schema can never contain them: a
 * field named like a server-owned one (see {@link SERVER_OWNED_FIELDS}) throws here, at startup.
 * Register it with `createEngine({ readTools })`; every adapter and the MCP server expose it, and
 * each call is audited in the tenant's chain.
 *
 * @example
 * const listOpenInvoices = defineReadTool({
 *   name: 'list_open_invoices',
 *   description: 'Lists the open supplier invoices.',
 *   input: z.strictObject({ currency: currencyCode().optional() }),
 *   read: ({ currency }, { tenant }) => invoices.open(tenant).filter((i) => !currency || i.currency === currency),
 * });
 */
export function defineReadTool<InputSchema extends z.ZodType, Result>(
  definition: ReadToolDefinition<InputSchema, Result>,
): ReadTool<z.output<InputSchema>, Result> {
  const d = definition;
  if (typeof d.name !== 'string' || !NAME.test(d.name) || d.name.length > 64) {
    throw new OperationDefinitionError(
      `read tool name "${String(d.name)}" must be lower-case words joined by _ (at most 64 characters), like list_open_invoices`,
    );
  }
  if (d.name.startsWith('propose_') || RESERVED_NAMES.includes(d.name)) {
    throw new OperationDefinitionError(`${d.name}: the name is reserved for countersign's own tools`);
  }
  if (typeof d.description !== 'string' || d.description.trim() === '') {
    throw new OperationDefinitionError(`${d.name}: a description for the model is required`);
  }
  if (typeof d.read !== 'function') throw new OperationDefinitionError(`${d.name}: read must be a function`);
  if (!(d.input instanceof z.ZodObject)) {
    throw new OperationDefinitionError(`${d.name}: the input schema must be a z.strictObject`);
  }
  checkSchema(d.name, z.toJSONSchema(d.input, { io: 'input', unrepresentable: 'any' }), '$');
  return Object.freeze({
    name: d.name,
    description: d.description,
    input: d.input as z.ZodType<z.output<InputSchema>>,
    read: d.read,
  });
}
