import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

/** One figure the reliability summary prints: what was tried, and what held. */
export interface Figure {
  readonly suite: 'faults' | 'races' | 'bad-input' | 'tamper';
  /** What the row is about, e.g. `SIGKILL after_claim`. */
  readonly what: string;
  readonly backend: 'sqlite' | 'postgres' | '-';
  /** How many cases were tried. */
  readonly tried: number;
  /** How many held (no duplicate, nothing lost, detected…). */
  readonly held: number;
  /** Anything worth a column: duplicates, losses, elapsed ms. */
  readonly detail?: Readonly<Record<string, number | string>>;
}

/**
 * Appends a figure to `$COUNTERSIGN_RELIABILITY_REPORT/figures.jsonl` when the variable is set
 * (scripts/reliability.ts sets it and prints the table); does nothing otherwise. Tests never
 * write to the console.
 */
export function reportFigure(figure: Figure): void {
  const dir = process.env['COUNTERSIGN_RELIABILITY_REPORT'];
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(join(dir, 'figures.jsonl'), `${JSON.stringify(figure)}\n`);
}
