// The shipped Grafana dashboard and Prometheus alert rules: promtool checks the rules and runs their
// unit tests (each alert fires on a series that should fire it and stays quiet on one that should
// not), the dashboard is valid JSON whose queries parse, and every metric name queried by either is
// one a real rigd exports (so neither can drift from the code).
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { parse, stringify } from 'yaml';
import { http } from '../helpers/http.ts';
import { promtool } from '../helpers/promtool.ts';
import { exportedNames, metricNames } from '../helpers/promql-names.ts';
import { startServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const root = path.resolve(import.meta.dirname, '../..');
const RULES = path.join(root, 'contrib/prometheus/rules.yml');
const RULES_TEST = path.join(root, 'contrib/prometheus/rules.test.yml');
const DASHBOARD = path.join(root, 'contrib/grafana/rigd.json');
/** Series Prometheus makes itself for every target. */
const PROMETHEUS_MADE = new Set(['up']);

interface Rule {
  alert?: string;
  expr: string;
}
interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

const rules = (parse(readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
  title: string;
  panels: Panel[];
  templating: { list: { name: string; definition?: string }[] };
};
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]);
const panelExprs = panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));

/** A dashboard query as Prometheus sees it once Grafana has put its variables in. */
function asPrometheus(expr: string): string {
  return expr.replace(/\$__rate_interval/g, '5m').replace(/\$instance/g, '.*');
}

test('promtool check rules: the alert rules are valid', (t) => {
  const r = promtool(['check', 'rules', RULES]);
  t.equal(r.status, 0, 'exit 0');
  t.match(r.output, /SUCCESS: 6 rules found/, r.output.split('\n').pop() ?? '');
  t.deepEqual(
    rules.map((x) => x.alert).sort(),
    ['RigdDiskAlmostFull', 'RigdDown', 'RigdIngestFailures', 'RigdReportLatencyHigh', 'RigdRigsOffline', 'RigdWriteErrors'],
    'the alerts: down, rigs offline, ingest failures, disk almost full, write errors, report latency',
  );
  t.end();
});

test('promtool test rules: each alert fires where it should and stays quiet where it should not', (t) => {
  const r = promtool(['test', 'rules', RULES_TEST]);
  t.equal(r.status, 0, `exit 0${r.status === 0 ? '' : `: ${r.output}`}`);
  t.match(r.output, /SUCCESS/, 'SUCCESS');
  const tests = (parse(readFileSync(RULES_TEST, 'utf8')) as {
    tests: { input_series: { series: string }[]; alert_rule_test: { alertname: string; exp_alerts: { exp_labels: Record<string, string> }[] }[] }[];
  }).tests;
  for (const rule of rules) {
    const cases = tests.flatMap((x) => x.alert_rule_test.filter((a) => a.alertname === rule.alert).map((a) => ({ a, series: x.input_series })));
    const fires = cases.some(({ a }) => a.exp_alerts.some((e) => e.exp_labels.instance === 'bad'));
    const quiet = cases.some(({ series }) => series.some((s) => s.series.includes('instance="good"')));
    t.ok(fires && quiet, `${rule.alert}: a case where it fires (instance bad) next to one where it must not (instance good)`);
  }
  t.end();
});

test('the Grafana dashboard is valid JSON with the panels an operator needs, and its queries parse', (t) => {
  t.equal(dashboard.title, 'rigd', 'title');
  const titles = panels.map((p) => p.title);
  for (const want of ['Rig report rate', 'Rig report latency', 'Rigs by status', 'Ingest queue depth', 'Ingest failures', 'data_dir free', 'Write commit time', 'Memory', 'Event loop lag']) {
    t.ok(titles.includes(want), `panel: ${want}`);
  }
  t.ok(panelExprs.length >= 20, `${panelExprs.length} queries`);
  // promtool parses PromQL in rule files: each query as a recording rule.
  const file = path.join(tmpDir(), 'dashboard-queries.yml');
  const asRules = panelExprs.map((p, i) => ({ record: `dashboard:query_${i}`, expr: asPrometheus(p.expr) }));
  writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules: asRules }] }));
  const r = promtool(['check', 'rules', file]);
  t.equal(r.status, 0, `every dashboard query is valid PromQL${r.status === 0 ? '' : `: ${r.output}`}`);
  t.end();
});

test('metric names are read out of expressions (so a renamed metric is caught)', (t) => {
  t.deepEqual(
    [...metricNames('histogram_quantile(0.99, sum by (job, le) (rate(rigd_x_seconds_bucket{instance=~"$instance",le!="1e9"}[$__rate_interval]))) > 1e9')],
    ['rigd_x_seconds_bucket'],
    'histogram_quantile over a rate',
  );
  t.deepEqual([...metricNames('sum(a{s="offline"}) / sum without (x) (b) and on (i) up == 0')].sort(), ['a', 'b', 'up'], 'binary operators and grouping');
  t.end();
});

test('every metric the dashboard and the rules query is one rigd exports', async (t) => {
  const s = await startServer();
  const res = await http(`${s.url}/metrics`, { headers: { host: new URL(s.url).host } });
  await s.close();
  t.equal(res.status, 200, 'a real /metrics scrape');
  const exported = exportedNames(res.text);
  const used = new Map<string, string>();
  for (const rule of rules) for (const n of metricNames(rule.expr)) used.set(n, `rule ${rule.alert}`);
  for (const p of panelExprs) for (const n of metricNames(p.expr)) used.set(n, `panel "${p.panel}"`);
  for (const v of dashboard.templating.list) {
    const m = /^label_values\((.+),\s*\w+\)$/.exec(v.definition ?? '');
    if (m) for (const n of metricNames(m[1])) used.set(n, `variable $${v.name}`);
  }
  t.ok(used.size >= 20, `${used.size} metric names queried`);
  for (const [name, where] of [...used].sort()) {
    t.ok(exported.has(name) || PROMETHEUS_MADE.has(name), `${name} (${where}) is exported`);
  }
});
