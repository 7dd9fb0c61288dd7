/**
 * A small metrics registry rendered in the Prometheus text exposition format 0.0.4: counters,
 * gauges and histograms with fixed buckets, each with a fixed list of label names.
 *
 * Why not a library: the format is a few lines of text, and the hot path must cost next to
 * nothing. A labelled metric hands out a child per label set (`labels(...)`), which callers
 * resolve once and keep: recording is then an addition on a plain object, with no string
 * built and no map consulted. The child for a label set is made once, and the rendered
 * `{name="value",…}` text with it, so label values are escaped once, not per scrape.
 *
 * What callers must guarantee: label values come from small, closed sets (route patterns,
 * verdicts, states). A value taken from a request (an id, a key, a hash) would both leak it
 * and grow the registry without bound; nothing here can tell, so nothing here tries.
 */

export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Request-latency buckets, seconds: 0.5 ms to 10 s. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

const NAME_RE = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_RE = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export interface CounterChild {
  inc(by?: number): void;
}
export interface GaugeChild {
  set(value: number): void;
  inc(by?: number): void;
}
export interface HistogramChild {
  observe(value: number): void;
}

export interface Metric<Child> {
  /** The child for these label values (in the order of the metric's label names); made once, then reused. */
  labels(...values: string[]): Child;
}

export interface Registry {
  counter(name: string, help: string, labelNames?: readonly string[]): Metric<CounterChild> & CounterChild;
  gauge(name: string, help: string, labelNames?: readonly string[]): Metric<GaugeChild> & GaugeChild;
  histogram(name: string, help: string, labelNames: readonly string[], buckets: readonly number[]): Metric<HistogramChild> & HistogramChild;
  /** Runs before each render: for gauges read at scrape time (a count from storage, memory). */
  onCollect(fn: () => void): void;
  /** Every family, HELP and TYPE first, then its samples. */
  render(): string;
}

/** Label value escaping of the text format: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\\" ? "\\\\" : c === '"' ? '\\"' : "\\n"));
}

/** HELP text escaping: backslash and line feed (a double quote is literal there). */
function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === "\\" ? "\\\\" : "\\n"));
}

export function formatValue(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (v === Number.POSITIVE_INFINITY) return "+Inf";
  if (v === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(v);
}

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram";
  render(out: string[]): void;
}

/** `{a="x",b="y"}` for these names and values, or "" without labels. */
function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((n, i) => `${n}="${escapeLabelValue(values[i]!)}"`);
  if (extra !== undefined) parts.push(extra);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

/**
 * Children keyed by their label values. The key is built only when a child is asked for, which
 * callers do once per label set (at start, or the first time a status is seen), never per event.
 */
function childrenOf<C>(name: string, labelNames: readonly string[], make: (values: readonly string[]) => C) {
  const children = new Map<string, { values: readonly string[]; child: C }>();
  return {
    children,
    get(values: readonly string[]): C {
      if (values.length !== labelNames.length) throw new TypeError(`${name} takes ${labelNames.length} label value(s), got ${values.length}`);
      const key = values.join("\u0000");
      let entry = children.get(key);
      if (entry === undefined) {
        for (const v of values) if (typeof v !== "string") throw new TypeError(`${name}: label values must be strings`);
        entry = { values: [...values], child: make(values) };
        children.set(key, entry);
      }
      return entry.child;
    },
  };
}

export function createRegistry(): Registry {
  const families: Family[] = [];
  const collectors: (() => void)[] = [];

  function register(name: string, labelNames: readonly string[]): void {
    if (!NAME_RE.test(name)) throw new TypeError(`bad metric name ${JSON.stringify(name)}`);
    if (families.some((f) => f.name === name)) throw new TypeError(`metric ${name} registered twice`);
    for (const l of labelNames) {
      if (!LABEL_RE.test(l) || l.startsWith("__") || l === "le") throw new TypeError(`bad label name ${JSON.stringify(l)} on ${name}`);
    }
    if (new Set(labelNames).size !== labelNames.length) throw new TypeError(`repeated label name on ${name}`);
  }

  return {
    counter(name, help, labelNames = []) {
      register(name, labelNames);
      if (!name.endsWith("_total")) throw new TypeError(`counter ${name} must end in _total`);
      type C = CounterChild & { value: number; readonly text: string };
      const kids = childrenOf<C>(name, labelNames, (values) => ({
        value: 0,
        text: labelText(labelNames, values),
        inc(by = 1) {
          if (!(by >= 0)) throw new RangeError(`${name} can only go up`);
          this.value += by;
        },
      }));
      families.push({
        name,
        help,
        type: "counter",
        render(out) {
          for (const { child } of kids.children.values()) out.push(`${name}${child.text} ${formatValue(child.value)}`);
        },
      });
      const unlabelled = labelNames.length === 0 ? kids.get([]) : null;
      return {
        labels: (...values) => kids.get(values),
        inc(by) {
          if (unlabelled === null) throw new TypeError(`${name} has labels: use labels(...)`);
          unlabelled.inc(by);
        },
      };
    },

    gauge(name, help, labelNames = []) {
      register(name, labelNames);
      type G = GaugeChild & { value: number; readonly text: string };
      const kids = childrenOf<G>(name, labelNames, (values) => ({
        value: 0,
        text: labelText(labelNames, values),
        set(v) {
          this.value = v;
        },
        inc(by = 1) {
          this.value += by;
        },
      }));
      families.push({
        name,
        help,
        type: "gauge",
        render(out) {
          for (const { child } of kids.children.values()) out.push(`${name}${child.text} ${formatValue(child.value)}`);
        },
      });
      const unlabelled = labelNames.length === 0 ? kids.get([]) : null;
      const need = () => {
        if (unlabelled === null) throw new TypeError(`${name} has labels: use labels(...)`);
        return unlabelled;
      };
      return {
        labels: (...values) => kids.get(values),
        set: (v) => need().set(v),
        inc: (by) => need().inc(by),
      };
    },

    histogram(name, help, labelNames, buckets) {
      register(name, labelNames);
      if (buckets.length === 0 || buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= buckets[i - 1]!))) {
        throw new TypeError(`${name}: buckets must be finite and strictly increasing`);
      }
      const bounds = [...buckets];
      const leTexts = bounds.map((b) => `le="${formatValue(b)}"`);
      type H = HistogramChild & { readonly counts: number[]; sum: number; count: number; readonly bucketTexts: string[]; readonly text: string };
      const kids = childrenOf<H>(name, labelNames, (values) => ({
        // Per-bucket (not cumulative) counts: an observation touches one slot; render adds them up.
        counts: new Array<number>(bounds.length).fill(0),
        sum: 0,
        count: 0,
        bucketTexts: [...leTexts, 'le="+Inf"'].map((le) => labelText(labelNames, values, le)),
        text: labelText(labelNames, values),
        observe(v) {
          if (Number.isNaN(v)) return;
          let i = 0;
          while (i < bounds.length && v > bounds[i]!) i++;
          if (i < bounds.length) this.counts[i]!++;
          this.sum += v;
          this.count++;
        },
      }));
      families.push({
        name,
        help,
        type: "histogram",
        render(out) {
          for (const { child } of kids.children.values()) {
            let cumulative = 0;
            for (let i = 0; i < bounds.length; i++) {
              cumulative += child.counts[i]!;
              out.push(`${name}_bucket${child.bucketTexts[i]} ${cumulative}`);
            }
            out.push(`${name}_bucket${child.bucketTexts[bounds.length]} ${child.count}`);
            out.push(`${name}_sum${child.text} ${formatValue(child.sum)}`);
            out.push(`${name}_count${child.text} ${child.count}`);
          }
        },
      });
      const unlabelled = labelNames.length === 0 ? kids.get([]) : null;
      return {
        labels: (...values) => kids.get(values),
        observe(v) {
          if (unlabelled === null) throw new TypeError(`${name} has labels: use labels(...)`);
          unlabelled.observe(v);
        },
      };
    },

    onCollect(fn) {
      collectors.push(fn);
    },

    render() {
      for (const fn of collectors) fn();
      const out: string[] = [];
      for (const f of families) {
        out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
        f.render(out);
      }
      return out.join("\n") + "\n";
    },
  };
}
