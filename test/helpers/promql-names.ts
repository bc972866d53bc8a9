// Metric names out of PromQL expressions and Prometheus expositions, to compare what the shipped
// dashboard and alert rules query with what rigd exports.

const NOT_NAMES = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metric names an expression selects (Grafana variables such as $instance are allowed inside matchers and ranges). */
export function metricNames(expr: string): Set<string> {
  const e = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""') // string literals (label values, regexes)
    .replace(/\{[^}]*\}/g, ' ') // label matchers
    .replace(/\[[^\]]*\]/g, ' ') // range and subquery durations
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' '); // grouping label lists
  const names = new Set<string>();
  for (const m of e.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const before = e[m.index - 1] ?? ' ';
    if (/[0-9.$]/.test(before)) continue; // part of a number (1e9, 5m) or a variable
    if (e.slice(m.index + m[0].length).trimStart().startsWith('(')) continue; // a function or aggregation
    if (NOT_NAMES.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return names;
}

/** Every series name an exposition offers: each sample's name, and each histogram's or summary's derived series. */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) {
      names.add(type[1]);
      if (type[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(type[1] + s);
      if (type[2] === 'summary') for (const s of ['_sum', '_count']) names.add(type[1] + s);
    } else if (line && !line.startsWith('#')) {
      names.add(/^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)![0]);
    }
  }
  return names;
}
