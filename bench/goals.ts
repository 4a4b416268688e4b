/**
 * Issue 12's goals, read off a run's figures: for each, the measured value, the target and whether
 * it was met (`null` when the run did not measure it, e.g. PostgreSQL skipped or no `--million`).
 */
type Json = Record<string, unknown>;

/** One goal: `met` is null when `value` was not measured. */
export interface Goal {
  readonly value: number | null;
  readonly target: string;
  readonly met: boolean | null;
}

const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Json)[k] : undefined), o);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function goal(value: unknown, op: '>=' | '<=', target: number): Goal {
  const v = num(value);
  return { value: v, target: `${op} ${target}`, met: v === null ? null : op === '>=' ? v >= target : v <= target };
}

/** The largest peak RSS of any Colloquy process of the run, MB. */
function colloquyPeakRss(r: Json): number | null {
  const values: unknown[] = [
    at(r, 'e2e', 'colloquy_peak_rss_mb'),
    at(r, 'e2e', 'cloud_api', 'peak_rss_mb'),
    at(r, 'open_loop', 'colloquy', 'peak_rss_mb'),
    at(r, 'open_loop', 'colloquy_postgres', 'peak_rss_mb'),
  ];
  for (const [key, v] of Object.entries((at(r, 'stores') ?? {}) as Json)) {
    if (/^(sqlite|postgres)_\d+$/.test(key)) values.push(...((at(v, 'peak_rss_mb') as unknown[] | undefined) ?? []));
  }
  for (const side of ['small', 'large']) values.push(at(r, 'million', side, 'peak_rss_mb'));
  const nums = values.map(num).filter((x): x is number => x !== null);
  return nums.length === 0 ? null : Math.max(...nums);
}

/** Issue 12's goals for this run's figures. */
export function goals(r: Json): Record<string, Goal> {
  return {
    ratio_sqlite: goal(at(r, 'e2e', 'ratio'), '>=', 0.8),
    ratio_postgres: goal(at(r, 'stores', 'postgres_1', 'ratio_to_baseline'), '>=', 0.8),
    ack_p99_ms_at_500_sqlite: goal(at(r, 'open_loop', 'colloquy', '500', 'ack_p99_ms'), '<=', 20),
    reply_p99_ms_at_500_sqlite: goal(at(r, 'open_loop', 'colloquy', '500', 'reply_p99_ms'), '<=', 100),
    ack_p99_ms_at_500_postgres: goal(at(r, 'open_loop', 'colloquy_postgres', '500', 'ack_p99_ms'), '<=', 20),
    reply_p99_ms_at_500_postgres: goal(at(r, 'open_loop', 'colloquy_postgres', '500', 'reply_p99_ms'), '<=', 100),
    colloquy_peak_rss_mb: goal(colloquyPeakRss(r), '<=', 200),
    million_turn_p50_ratio: goal(at(r, 'million', 'ratio_turn_p50'), '<=', 1.2),
    million_turn_p99_ratio: goal(at(r, 'million', 'ratio_turn_p99'), '<=', 1.2),
  };
}
