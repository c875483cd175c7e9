/** One labelled series of a KeyedHistogram: non-cumulative bucket counts (the last is +Inf). */
export interface Series {
  labels: Record<string, string>;
  counts: Float64Array;
  sum: number;
  count: number;
}

/** Series beyond this many are folded into one labelled `overflow` (label values stay bounded). */
const MAX_SERIES = 10_000;

/**
 * A Prometheus histogram whose series are found by a string key the caller builds, counted in
 * typed arrays. prom-client's own histogram hashes the label object on every observation
 * (`hashObject`), ~4 % of a toplist request's CPU. Registered in a prom-client registry as a
 * custom metric (`get`/`reset`) and exposed like any of its histograms.
 */
export class KeyedHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();
  /** Counts resets: a caller holding series found earlier drops them when it changes. */
  generation = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    private readonly overflowLabels: Record<string, string>,
  ) {}

  /** The series `key`, if it was added. */
  find(key: string): Series | undefined {
    return this.series.get(key);
  }

  /** Adds the series `key` (or, past MAX_SERIES, returns the overflow series). */
  add(key: string, labels: Record<string, string>): Series {
    const overflow = this.series.size >= MAX_SERIES;
    const k = overflow ? '\u0000overflow' : key;
    let s = this.series.get(k);
    if (!s) {
      s = {
        labels: overflow ? this.overflowLabels : labels,
        counts: new Float64Array(this.buckets.length + 1),
        sum: 0,
        count: 0,
      };
      this.series.set(k, s);
    }
    return s;
  }

  /** Records one observation in a series. */
  record(s: Series, value: number): void {
    let i = 0;
    while (i < this.buckets.length && value > (this.buckets[i] as number)) i++;
    s.counts[i] = (s.counts[i] ?? 0) + 1;
    s.sum += value;
    s.count++;
  }

  /** The metric as prom-client's registry formats it: cumulative buckets, sum and count per series. */
  async get() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += s.counts[i] as number;
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
    this.generation++;
  }
}
