/**
 * Metrics for `GET /metrics`, kept by prom-client. {@link Metrics} is a thin facade that creates a
 * metric the first time its name is used, with the help text and labels src/metrics-catalog.ts
 * declares for it, so callers name a metric where they count it and its meaning lives in one place.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { ColloquyError } from './errors.js';
import { METRICS, type MetricLabels, type MetricName, type MetricOf } from './metrics-catalog.js';

type Labels = Readonly<Record<string, string>>;
type Kind = 'counter' | 'gauge' | 'histogram';

/** Histogram buckets in seconds: from a millisecond (a local turn) to ten seconds (a slow provider). */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Family {
  readonly kind: Kind;
  /** Sorted: the order of the tally's keys. */
  readonly labelNames: readonly string[];
  readonly metric: Counter | Gauge | Histogram;
}

/** What {@link Metrics} takes. */
export interface MetricsOptions {
  /**
   * Also collect prom-client's default process metrics (CPU, memory, event loop lag, GC) into
   * this registry. Off by default: they install process-wide observers, one set per registry.
   */
  readonly processMetrics?: boolean | undefined;
}

/**
 * Colloquy's counters, gauges and histograms (src/metrics-catalog.ts), in a registry of their own.
 * Metrics of your own go straight into {@link Metrics.registry} with prom-client.
 */
export class Metrics {
  /** The prom-client registry behind this instance (one per instance, so runtimes never share). */
  readonly registry = new Registry();
  readonly #families = new Map<string, Family>();
  /** Counter and gauge values and histogram counts, by name and labels, for {@link value}. */
  readonly #tally = new Map<string, Map<string, number>>();

  constructor(options: MetricsOptions = {}) {
    if (options.processMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  /** Adds to a counter. */
  inc<N extends MetricOf<'counter'>>(name: N, labels: MetricLabels<N>, by = 1): void {
    const f = this.#family(name, 'counter', labels);
    (f.metric as Counter).inc(labels, by);
    this.#add(name, key(f, labels), by);
  }

  /** Sets a gauge. */
  set<N extends MetricOf<'gauge'>>(name: N, labels: MetricLabels<N>, value: number): void {
    const f = this.#family(name, 'gauge', labels);
    (f.metric as Gauge).set(labels, value);
    this.#tallyOf(name).set(key(f, labels), value);
  }

  /** Records a duration in seconds in a histogram. */
  observe<N extends MetricOf<'histogram'>>(name: N, labels: MetricLabels<N>, seconds: number): void {
    const f = this.#family(name, 'histogram', labels);
    (f.metric as Histogram).observe(labels, seconds);
    this.#add(name, key(f, labels), 1);
  }

  /** A counter's or gauge's current value, or a histogram's count (0 when never set). */
  value(name: MetricName, labels: Labels = {}): number {
    const f = this.#families.get(name);
    return f === undefined ? 0 : (this.#tally.get(name)?.get(key(f, labels)) ?? 0);
  }

  /** The sum of a counter over all its label sets. */
  total(name: MetricName): number {
    let n = 0;
    for (const v of this.#tally.get(name)?.values() ?? []) n += v;
    return n;
  }

  /** The Prometheus text exposition of every metric (and process metrics when enabled). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** The content type of {@link render}'s text. */
  get contentType(): string {
    return this.registry.contentType;
  }

  #family(name: MetricName, kind: Kind, labels: Labels): Family {
    let f = this.#families.get(name);
    if (!f) {
      const declared = METRICS[name] as { readonly type: Kind; readonly help: string; readonly labels: readonly string[] } | undefined;
      if (declared === undefined) throw new ColloquyError('metric_unknown', `metric ${name} is not declared in src/metrics-catalog.ts`);
      if (declared.type !== kind) throw new ColloquyError('metric_kind', `metric ${name} is a ${declared.type}; it cannot be used as a ${kind}`);
      const labelNames = [...declared.labels].sort();
      const config = { name, help: declared.help, labelNames, registers: [this.registry] };
      const metric = kind === 'counter' ? new Counter(config) : kind === 'gauge' ? new Gauge(config) : new Histogram({ ...config, buckets: BUCKETS });
      this.#families.set(name, (f = { kind, labelNames, metric }));
    }
    if (f.kind !== kind) throw new ColloquyError('metric_kind', `metric ${name} is a ${f.kind}; it cannot be used as a ${kind}`);
    if (!sameNames(f.labelNames, labels)) {
      throw new ColloquyError('metric_labels', `metric ${name} has the labels [${f.labelNames.join(', ')}]; it was given [${Object.keys(labels).sort().join(', ')}]`);
    }
    return f;
  }

  #tallyOf(name: string): Map<string, number> {
    let t = this.#tally.get(name);
    if (!t) this.#tally.set(name, (t = new Map()));
    return t;
  }

  #add(name: string, k: string, by: number): void {
    const t = this.#tallyOf(name);
    t.set(k, (t.get(k) ?? 0) + by);
  }
}

/** Whether `labels` has exactly the names `names` (counted on every event: no allocation). */
function sameNames(names: readonly string[], labels: Labels): boolean {
  let n = 0;
  for (const k in labels) {
    if (!Object.hasOwn(labels, k)) continue;
    if (!names.includes(k)) return false;
    n++;
  }
  return n === names.length;
}

/** A label set's key in the tally: its values in the family's (sorted) label order. */
function key(f: Family, labels: Labels): string {
  let k = '';
  for (const n of f.labelNames) k += `${labels[n] ?? ''}\u0000`;
  return k;
}
