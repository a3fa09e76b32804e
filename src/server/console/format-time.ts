/** `45 s`, `12 min`, `2 h 5 min`, `3 d 4 h`: a span of milliseconds, coarse enough to read at a glance. */
export function formatSpan(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

/** `2026-11-29 12:04:05 UTC`: an absolute time every operator reads the same way. */
export function formatInstant(at: Date | number): string {
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** How long ago, or `just now`. */
export function formatAge(at: Date, now: number): string {
  const ms = now - at.getTime();
  return ms < 5_000 ? 'just now' : `${formatSpan(ms)} ago`;
}
