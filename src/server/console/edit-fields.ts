import { z } from 'zod';
import { own } from '../../canonical/own.js';
import type { AnyOperation } from '../../operation/define-operation.js';

/** One editable request field and the input the console renders for it. */
export interface EditField {
  readonly name: string;
  readonly input: 'text' | 'textarea' | 'number' | 'checkbox';
  readonly description: string | undefined;
}

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  while (
    current instanceof z.ZodOptional ||
    current instanceof z.ZodNullable ||
    current instanceof z.ZodDefault
  ) {
    current = current.unwrap() as z.ZodType;
  }
  return current;
}

/** The operation's `editable` request fields with the input each needs (from the request schema). */
export function editFields(operation: AnyOperation): EditField[] {
  const shape =
    operation.request instanceof z.ZodObject ? (operation.request.shape as Record<string, z.ZodType>) : {};
  return operation.editable.map((name) => {
    const schema = own(shape, name);
    const inner = schema ? unwrap(schema) : undefined;
    const input =
      inner instanceof z.ZodNumber
        ? 'number'
        : inner instanceof z.ZodBoolean
          ? 'checkbox'
          : inner instanceof z.ZodString && (inner.maxLength === null || inner.maxLength > 300)
            ? 'textarea'
            : 'text';
    return { name, input, description: schema?.description ?? inner?.description };
  });
}

/**
 * The changes an edit form asks for: each editable field whose submitted value differs from the
 * current request, converted to the field's type (a number field that is not a number stays text,
 * so the operation's schema refuses it with a message, never a silent 0).
 */
export function formChanges(
  fields: readonly EditField[],
  form: ReadonlyMap<string, string>,
  current: unknown,
): Record<string, unknown> {
  const request = (typeof current === 'object' && current !== null ? current : {}) as Record<string, unknown>;
  const changes: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = form.get(`field.${field.name}`);
    let value: unknown;
    if (field.input === 'checkbox') value = raw === 'on';
    else if (raw === undefined) continue;
    else if (field.input === 'number') value = /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw.trim()) : raw;
    else value = field.input === 'textarea' ? raw.replace(/\r\n/g, '\n') : raw;
    if (value !== request[field.name]) changes[field.name] = value;
  }
  return changes;
}
