/** A Prometheus histogram (cumulative buckets, sum, count) per label set, rendered in text format 0.0.4. */
export class Histogram {
  readonly #series = new Map<string, { labels: Record<string, string>; buckets: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending, in the unit of the metric (seconds). */
    readonly bounds: readonly number[],
  ) {}

  observe(value: number, labels: Record<string, string> = {}): void {
    const key = JSON.stringify(labels);
    let s = this.#series.get(key);
    if (!s) {
      s = { labels, buckets: this.bounds.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, s);
    }
    for (let i = 0; i < this.bounds.length; i++) if (value <= this.bounds[i]) s.buckets[i] += 1;
    s.sum += value;
    s.count += 1;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.#series.values()) {
      this.bounds.forEach((b, i) => lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: String(b) })} ${s.buckets[i]}`));
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(s.labels)} ${s.sum}`);
      lines.push(`${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** `{a="1",b="x"}` with Prometheus escaping (backslash, quote, newline), or '' without labels. */
export function labelText(labels: Record<string, string>): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** One gauge or counter family with its samples. */
export function family(name: string, type: 'gauge' | 'counter', help: string, samples: [Record<string, string>, number][]): string {
  return `${[`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, ...samples.map(([l, v]) => `${name}${labelText(l)} ${v}`)].join('\n')}\n`;
}
