import { CountersignError } from '../canonical/errors.js';

/** The server could not listen (the port is taken, the host is not an address of this machine). */
export class ListenError extends CountersignError {}
