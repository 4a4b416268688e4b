/** Durations as people write them: `500ms`, `30s`, `10m`, `2h`, `1d`, `1h30m`, or milliseconds. */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)/gy;

/** A duration: a number of milliseconds, or text such as `10m`, `2h`, `1h30m`, `45s`. */
export type Duration = number | string;

/** Milliseconds in a duration; throws a readable error for anything else. */
export function parseDuration(d: Duration): number {
  if (typeof d === 'number') {
    if (!Number.isFinite(d) || d < 0) throw new Error(`A duration must be a non-negative number of milliseconds (got ${d})`);
    return d;
  }
  const text = d.trim();
  if (/^\d+$/.test(text)) return Number(text);
  PART.lastIndex = 0;
  let ms = 0;
  let m: RegExpExecArray | null;
  let end = 0;
  while ((m = PART.exec(text)) !== null) {
    ms += Number(m[1]) * (UNIT_MS[m[2]!] ?? 0);
    end = PART.lastIndex;
    while (text[end] === ' ') end++;
    PART.lastIndex = end;
  }
  if (end === 0 || end !== text.length) throw new Error(`Cannot read the duration ${JSON.stringify(d)}: write it like 500ms, 30s, 10m, 2h, 1d or 1h30m`);
  return Math.round(ms);
}

/** A duration for people: `10m`, `2h 30m`, `45s`, `250ms`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    const n = Math.floor(rest / size);
    if (n > 0) parts.push(`${n}${unit}`);
    rest -= n * size;
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join(' ');
}
