#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { runCli } from './run-cli.js';

const controller = new AbortController();
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => controller.abort());

const code = await runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: async () => readFileSync(0, 'utf8'),
  signal: controller.signal,
});
process.exitCode = code;
