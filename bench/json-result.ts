/** `--json` on any bench: its figures as one JSON object on the last line, for scripts and CI. */
export const wantsJson = process.argv.includes('--json');

/** Prints `figures` as the bench's last line when `--json` was given; rounds to 3 decimals. */
export function printJsonResult(figures: Record<string, unknown>): void {
  if (!wantsJson) return;
  const rounded = JSON.stringify(figures, (_key, value: unknown) =>
    typeof value === 'number' ? Math.round(value * 1000) / 1000 : value,
  );
  process.stdout.write(`${rounded}\n`);
}
