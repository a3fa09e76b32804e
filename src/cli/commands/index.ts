import type { Command } from '../command.js';
import { auditCheckpointCommand } from './audit-checkpoint.js';
import { auditExportCommand } from './audit-export.js';
import { auditShowCommand } from './audit-show.js';
import { auditVerifyCommand } from './audit-verify.js';
import { canonicalizeCommand } from './canonicalize.js';
import { demoCommand } from './demo.js';
import { diffCommand } from './diff.js';
import { digestCommand } from './digest.js';
import { expireVersionCommand } from './expire-version.js';
import { mcpCommand } from './mcp.js';
import { migrateCommand } from './migrate.js';
import { proposalsListCommand } from './proposals-list.js';
import { recoverCommand } from './recover.js';
import { serveCommand } from './serve.js';
import { tokenListCommand } from './token-list.js';
import { tokenRevokeCommand } from './token-revoke.js';

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
  auditCheckpointCommand,
  auditExportCommand,
  proposalsListCommand,
  expireVersionCommand,
  recoverCommand,
  migrateCommand,
  tokenListCommand,
  tokenRevokeCommand,
  serveCommand,
  mcpCommand,
];
