export { type Constraint, type Constraints, constraintSchema, violation } from './constraints.js';
export { evaluateGrant, type Grant, type GrantFit, grantIssues, toGrant, withinResource } from './grant.js';
