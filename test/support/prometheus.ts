/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: it throws on any
 * line a scraper would reject or that breaks the format's rules, rather than skipping it.
 *
 * Checked: every line is a `# HELP`, a `# TYPE` or a sample `name{label="value",…} value`; each
 * family has HELP then TYPE before its samples, once; samples belong to the family above them
 * (histograms: `_bucket` with `le`, `_sum`, `_count`; counters end in `_total`); label values
 * use only the three escapes (`\\`, `\"`, `\n`); no series appears twice; histogram buckets
 * ascend in `le`, are monotone, end at `+Inf`, and `+Inf` equals `_count`.
 */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}
export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  readonly samples: Sample[];
}

const NAME = "[a-zA-Z_:][a-zA-Z0-9_:]*";
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(text: string, line: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(text)) throw new Error(`bad value in: ${line}`);
  return Number(text);
}

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf("=", i);
    if (eq < 0) throw new Error(`bad labels in: ${line}`);
    const name = text.slice(i, eq);
    if (!LABEL.test(name)) throw new Error(`bad label name ${JSON.stringify(name)} in: ${line}`);
    if (name in labels) throw new Error(`repeated label ${name} in: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`unquoted label value in: ${line}`);
    let j = eq + 2;
    let value = "";
    for (;;) {
      if (j >= text.length) throw new Error(`unterminated label value in: ${line}`);
      const c = text[j]!;
      if (c === '"') break;
      if (c === "\n") throw new Error(`raw newline in label value: ${line}`);
      if (c === "\\") {
        const n = text[j + 1];
        if (n === "\\") value += "\\";
        else if (n === '"') value += '"';
        else if (n === "n") value += "\n";
        else throw new Error(`bad escape \\${n} in: ${line}`);
        j += 2;
        continue;
      }
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ",") throw new Error(`expected , between labels in: ${line}`);
      i++;
    }
  }
  return labels;
}

export function parseExposition(text: string): Map<string, Family> {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a line feed");
  const families = new Map<string, Family>();
  let helpFor: { name: string; help: string } | null = null;
  let current: Family | null = null;
  const seen = new Set<string>();
  for (const line of text.slice(0, -1).split("\n")) {
    if (line === "") throw new Error("empty line");
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line))) {
      if (families.has(m[1]!) || helpFor !== null) throw new Error(`HELP out of place: ${line}`);
      if (m[2]!.replace(/\\[\\n]/g, "").includes("\\")) throw new Error(`bad escape in HELP: ${line}`);
      helpFor = { name: m[1]!, help: m[2]!.replace(/\\(\\|n)/g, (_, c: string) => (c === "n" ? "\n" : "\\")) };
      current = null;
      continue;
    }
    if ((m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line))) {
      if (helpFor === null || helpFor.name !== m[1]) throw new Error(`TYPE without its HELP just before: ${line}`);
      current = { name: m[1]!, help: helpFor.help, type: m[2] as Family["type"], samples: [] };
      families.set(current.name, current);
      helpFor = null;
      continue;
    }
    if (line.startsWith("#")) throw new Error(`unexpected comment: ${line}`);
    m = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)$`).exec(line);
    if (m === null) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    if (current === null) throw new Error(`sample before its family's HELP and TYPE: ${line}`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const labels = labelText === undefined ? {} : parseLabels(labelText, line);
    const value = parseValue(valueText, line);
    const f = current;
    const allowed = f.type === "histogram" ? [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`] : [f.name];
    if (!allowed.includes(name)) throw new Error(`sample ${name} does not belong to family ${f.name}`);
    if (f.type === "counter" && !f.name.endsWith("_total")) throw new Error(`counter ${f.name} must end in _total`);
    if (f.type === "counter" && !(value >= 0)) throw new Error(`negative counter: ${line}`);
    if (name.endsWith("_bucket") !== ("le" in labels)) throw new Error(`le belongs on buckets only: ${line}`);
    const key = name + JSON.stringify(Object.entries(labels).sort());
    if (seen.has(key)) throw new Error(`series twice: ${line}`);
    seen.add(key);
    f.samples.push({ name, labels, value });
  }
  if (helpFor !== null) throw new Error(`HELP without TYPE for ${helpFor.name}`);
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: { le: number; v: number }[]; sum?: number; count?: number }>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    let e = series.get(key);
    if (e === undefined) series.set(key, (e = { buckets: [] }));
    if (s.name.endsWith("_bucket")) e.buckets.push({ le: parseValue(le!, `le=${le}`), v: s.value });
    else if (s.name.endsWith("_sum")) e.sum = s.value;
    else e.count = s.value;
  }
  for (const [key, e] of series) {
    if (e.sum === undefined || e.count === undefined) throw new Error(`${f.name}${key}: _sum and _count required`);
    if (e.buckets.length === 0 || e.buckets.at(-1)!.le !== Infinity) throw new Error(`${f.name}${key}: the last bucket must be +Inf`);
    for (let i = 1; i < e.buckets.length; i++) {
      if (!(e.buckets[i]!.le > e.buckets[i - 1]!.le)) throw new Error(`${f.name}${key}: le must ascend`);
      if (e.buckets[i]!.v < e.buckets[i - 1]!.v) throw new Error(`${f.name}${key}: buckets must be cumulative`);
    }
    if (e.buckets.at(-1)!.v !== e.count) throw new Error(`${f.name}${key}: +Inf bucket ${e.buckets.at(-1)!.v} ≠ _count ${e.count}`);
  }
}

/** The value of one sample: the family's samples named `name` whose labels include `labels`; exactly one must match. */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number | undefined {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ""));
  const hits = (family?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${hits.length} series`);
  return hits[0]?.value;
}
