/** A small metrics registry rendered as Prometheus text (`GET /metrics`). */

type Labels = Readonly<Record<string, string>>;

const key = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

const DEFAULT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series { labels: Labels; value: number; buckets?: number[]; sum?: number }
interface Family { help: string; type: 'counter' | 'histogram' | 'gauge'; series: Map<string, Series> }

/** Counters, gauges and histograms with labels. */
export class Metrics {
  private readonly families = new Map<string, Family>();

  /** Adds to a counter. */
  inc(name: string, help: string, labels: Labels = {}, by = 1): void {
    this.series(name, help, 'counter', labels).value += by;
  }

  /** Sets a gauge. */
  set(name: string, help: string, labels: Labels, value: number): void {
    this.series(name, help, 'gauge', labels).value = value;
  }

  /** Records a duration in seconds in a histogram. */
  observe(name: string, help: string, labels: Labels, seconds: number): void {
    const s = this.series(name, help, 'histogram', labels);
    s.buckets ??= DEFAULT_BUCKETS.map(() => 0);
    DEFAULT_BUCKETS.forEach((b, i) => { if (seconds <= b) s.buckets![i]! += 1; });
    s.sum = (s.sum ?? 0) + seconds;
    s.value += 1;
  }

  /** A counter's or gauge's current value (0 when never set). */
  value(name: string, labels: Labels = {}): number {
    return this.families.get(name)?.series.get(key(labels))?.value ?? 0;
  }

  /** The sum of a counter over all its label sets. */
  total(name: string): number {
    let n = 0;
    for (const s of this.families.get(name)?.series.values() ?? []) n += s.value;
    return n;
  }

  /** Prometheus text exposition format. */
  render(): string {
    const lines: string[] = [];
    for (const [name, f] of this.families) {
      lines.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.type}`);
      for (const s of f.series.values()) {
        if (f.type !== 'histogram') { lines.push(`${name}${fmt(s.labels)} ${s.value}`); continue; }
        DEFAULT_BUCKETS.forEach((b, i) => lines.push(`${name}_bucket${fmt({ ...s.labels, le: String(b) })} ${s.buckets![i]}`));
        lines.push(`${name}_bucket${fmt({ ...s.labels, le: '+Inf' })} ${s.value}`, `${name}_sum${fmt(s.labels)} ${s.sum ?? 0}`, `${name}_count${fmt(s.labels)} ${s.value}`);
      }
    }
    return `${lines.join('\n')}\n`;
  }

  private series(name: string, help: string, type: Family['type'], labels: Labels): Series {
    let f = this.families.get(name);
    if (!f) this.families.set(name, (f = { help, type, series: new Map() }));
    const k = key(labels);
    let s = f.series.get(k);
    if (!s) f.series.set(k, (s = { labels, value: 0 }));
    return s;
  }
}

function fmt(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}
