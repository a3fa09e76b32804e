export { createLifecycleMetrics, type LifecycleMetrics } from './prometheus-metrics.js';
export { createTracingObserver } from './tracing.js';
