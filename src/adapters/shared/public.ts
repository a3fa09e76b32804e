/**
 * What every framework adapter's entry point exports alike: agent binding, binding errors, the
 * handback context, tool options and names. Each adapter's `index.ts` re-exports this module.
 *
 * @module
 */
export type { AgentBinding, BindingSource } from './agent-binding.js';
export {
  BindingError,
  type BindingErrorHook,
  type BindingErrorReason,
  type BindingField,
  bindingErrorOf,
} from './errors.js';
export type { HandbackContext, HandbackRequest } from './handback-context.js';
export { handbackContext } from './handback-context.js';
export type { OperationToolOptions } from './operation-tools.js';
export type { ReadToolOptions } from './read-tools.js';
export { toolNameOf } from './tool-name.js';
