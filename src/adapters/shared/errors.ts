/**
 * The errors of the adapter entry points (`countersign/openai-agents`, `/langgraph`, `/ai-sdk`,
 * `/mcp`): an agent binding the application gave that cannot be used. Extends `CountersignError`.
 */
export {
  BindingError,
  bindingErrorOf,
  type BindingErrorHook,
  type BindingErrorReason,
  type BindingField,
} from './agent-binding.js';
