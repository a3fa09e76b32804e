/**
 * The errors of `countersign/server`: a refusal as an RFC 9457 problem, and a server that could
 * not listen. Both extend `CountersignError`.
 */
export { HttpProblem } from '../http/http-problem.js';
export { ListenError } from './listen-error.js';
