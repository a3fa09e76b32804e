/**
 * The tool name of an operation: `propose_` plus its kind with dots as underscores
 * (`invoice.pay` → `propose_invoice_pay`). Operation kinds are dotted lower-case words, so the name
 * always fits every framework's `^[a-zA-Z0-9_-]{1,64}$` rule (kinds longer than 56 characters do not).
 */
export function toolNameOf(kind: string): string {
  return `propose_${kind.replaceAll('.', '_')}`;
}
