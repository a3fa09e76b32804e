import type { Command } from '../command.js';
import { auditShowCommand } from './audit-show.js';
import { auditVerifyCommand } from './audit-verify.js';
import { canonicalizeCommand } from './canonicalize.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { digestCommand } from './digest.js';
import { proposalsListCommand } from './proposals-list.js';

/**
 * Every `countersign` subcommand. Each lives in its own file in this folder; add new ones here.
 */
export const COMMANDS: readonly Command[] = [
  canonicalizeCommand,
  digestCommand,
  diffCommand,
  demoCommand,
  auditVerifyCommand,
  auditShowCommand,
  proposalsListCommand,
];
