/** What GET /readyz answered, and how long it took. */
export interface ReadyProbe {
  readonly status: number;
  readonly ms: number;
  readonly body: string;
}

/** One GET /readyz (never through the load's tally: it is the test's own question). */
export async function readyz(url: string): Promise<ReadyProbe> {
  const started = Date.now();
  try {
    const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(20_000) });
    return { status: r.status, ms: Date.now() - started, body: (await r.text()).slice(0, 500) };
  } catch (error) {
    return { status: 0, ms: Date.now() - started, body: String(error) };
  }
}

/**
 * Asks GET /readyz until it answers `status` (polling every 100 ms), and returns that answer;
 * throws with the last answer after `timeoutMs`. Each answer must come within `answerMs` (the
 * readiness check's own 2 s bound, with a margin).
 */
export async function waitForReadyz(
  url: string,
  status: 200 | 503,
  timeoutMs: number,
  answerMs = 10_000,
): Promise<ReadyProbe> {
  const deadline = Date.now() + timeoutMs;
  let last: ReadyProbe | undefined;
  for (;;) {
    last = await readyz(url);
    if (last.ms > answerMs) throw new Error(`GET /readyz took ${last.ms} ms: ${last.body}`);
    if (last.status === status) return last;
    if (Date.now() > deadline)
      throw new Error(
        `GET /readyz never answered ${status} within ${timeoutMs} ms; last ${last.status} ${last.body}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
