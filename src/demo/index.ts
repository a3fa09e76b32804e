/**
 * The demo behind `countersign serve --demo`: seeded principals and a scripted agent.
 *
 * @packageDocumentation
 */
export { type DemoAgentReport, runDemoAgent } from './demo-agent.js';
export { type DemoCredentials, type DemoOperator, writeDemoCredentials } from './demo-credentials.js';
export { DEMO_TENANTS, type SeedResult, seedDemo } from './seed-demo.js';
export { seedDemoRouting } from './demo-routing.js';
