import type { Command } from '../command.js';

/**
 * Every `countersign` subcommand. Each lives in its own file in this folder; add new ones here.
 */
export const COMMANDS: readonly Command[] = [];
