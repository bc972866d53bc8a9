// GET /metrics after real traffic over real sockets (rig reports, failed and throttled logins, an
// upload reservation, one capture ingested and one refused): promtool accepts the exposition without
// a lint warning, and rigd's own series count exactly what was done.
import { hostname } from 'node:os';
import { statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { setTimeout as sleep } from 'node:timers/promises';
import { NotFound } from '../../src/errors.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { putFile, settled, settledJob } from '../helpers/captures.ts';
import { makeCapture } from '../helpers/capture-files.ts';
import { http } from '../helpers/http.ts';
import { promtool, sample } from '../helpers/promtool.ts';
import { startServer } from '../helpers/server.ts';
import { tmpDir } from '../helpers/tmp.ts';

const REPORTS = 5;
const files = tmpDir();

test('/metrics after real traffic: promtool-clean, and the counts are what was done', async (t) => {
  // Loopback counts as the VPN here, so rigs may report from 127.0.0.1.
  const s = await startServer({ vpn: { cidr: '127.0.0.0/8' }, auth: { max_failures_per_login: 2 } });
  await s.app.storage.ensureBucket();
  const host = new URL(s.url).host;
  const form = { host, 'content-type': 'application/x-www-form-urlencoded' };

  const reports = await Promise.all(
    Array.from({ length: REPORTS }, (_, i) =>
      http(`${s.url}/api/v1/rigs/rig${i + 1}`, { method: 'PUT', headers: form, body: `rig_serial=S${i + 1}&software_version=2.0&git_branch=main` }),
    ),
  );
  t.deepEqual(reports.map((r) => r.status), Array(REPORTS).fill(200), `${REPORTS} rig reports stored`);
  const refused = await http(`${s.url}/api/v1/rigs/rig9`, { method: 'PUT', headers: form, body: 'software_version=2.0' });
  t.equal(refused.status, 400, 'a report without rig_serial: 400 (not counted as stored)');

  const logins = [];
  for (let i = 0; i < 3; i++) logins.push((await http(`${s.url}/api/v1/sessions`, { headers: { host }, json: { login: 'nobody', password: 'wrong' } })).status);
  t.deepEqual(logins, [401, 401, 429], 'two failed logins, then the throttle');

  const reservation = await http(`${s.url}/api/v1/rigs/upload?key=rig1/run-1.sqlite&size=1234`, { headers: { host } });
  t.equal(reservation.status, 200, 'an upload reservation');

  const good = await makeCapture(path.join(files, 'good.sqlite'));
  await putFile(s.app, 'rig1/good.sqlite', good.path);
  const bad = path.join(files, 'bad.sqlite');
  writeFileSync(bad, 'this is not a database');
  await putFile(s.app, 'rig1/bad.sqlite', bad);
  for (const key of ['rig1/good.sqlite', 'rig1/bad.sqlite']) {
    const { capture } = await s.app.captures.queueTarget(key);
    const done = await settled(s.app, capture.id);
    await settledJob(s.app, Number(done.job_id));
  }

  const res = await http(`${s.url}/metrics`, { headers: { host } });
  t.equal(res.status, 200, '/metrics: 200');
  t.equal(res.headers['content-type'], s.app.metrics.contentType, `content type: ${res.headers['content-type']}`);
  t.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8', 'Prometheus text format 0.0.4');
  const body = res.text;

  const check = promtool(['check', 'metrics'], body);
  t.equal(check.status, 0, 'promtool check metrics: exit 0');
  t.equal(check.output, '', `promtool check metrics: no lint warning${check.output ? `: ${check.output}` : ''}`);

  const expect: [string, number][] = [
    ['rigd_rig_reports_total', REPORTS],
    ['rigd_rig_report_duration_seconds_count', REPORTS],
    ['rigd_rigs{status="online"}', REPORTS],
    ['rigd_rigs{status="offline"}', 0],
    ['rigd_login_failures_total', 2],
    ['rigd_login_throttled_total', 1],
    ['rigd_uploads{state="reserved"}', 1],
    ['rigd_upload_bytes{state="reserved"}', 1234],
    ['rigd_uploads{state="uploaded"}', 0],
    ['rigd_captures{state="ingested"}', 1],
    ['rigd_captures{state="failed"}', 1],
    ['rigd_jobs{state="done"}', 1],
    ['rigd_ingest_queue_depth', 0],
    ['rigd_job_duration_seconds_count{kind="capture",outcome="done"}', 1],
    ['rigd_job_failures_total{kind="capture",outcome="failed"}', 1],
    ['rigd_write_errors_total', 0],
    ['rigd_http_request_duration_seconds_count{method="POST",route="/api/v1/sessions",status="401"}', 2],
    ['rigd_http_request_duration_seconds_count{method="POST",route="/api/v1/sessions",status="429"}', 1],
  ];
  for (const [series, value] of expect) t.equal(sample(body, series), value, `${series} ${value}`);

  // Reports and the reservation are group-committed: every item is in some batch, never more batches than items.
  const items = sample(body, 'rigd_write_batch_size_sum') ?? 0;
  const batches = sample(body, 'rigd_write_batch_size_count') ?? 0;
  t.ok(items >= REPORTS + 1, `group-committed items: ${items} (>= ${REPORTS} reports + 1 reservation)`);
  t.ok(batches >= 1 && batches <= items, `batches: ${batches}`);
  t.ok((sample(body, 'rigd_write_batch_commit_duration_seconds_count') ?? 0) === batches, 'one commit time per batch');
  t.ok((sample(body, 'rigd_write_transaction_duration_seconds_count') ?? 0) >= batches, 'every committed transaction timed');
  t.equal(sample(body, 'rigd_db_commit_seconds_count'), sample(body, 'rigd_write_transaction_duration_seconds_count'), 'every committed transaction: its COMMIT timed');
  t.ok((sample(body, 'rigd_event_loop_delay_seconds_count') ?? 0) > 0, 'event-loop delay sampled');

  const free = sample(body, 'rigd_data_dir_free_bytes') ?? NaN;
  const size = sample(body, 'rigd_data_dir_size_bytes') ?? NaN;
  const st = statfsSync(s.config.data_dir);
  t.equal(size, st.blocks * st.bsize, 'data_dir file system size as statfs says');
  t.ok(free > 0 && free <= size && Math.abs(free - st.bavail * st.bsize) < size * 0.05, `data_dir free bytes: ${free}`);

  t.ok((sample(body, 'process_resident_memory_bytes') ?? 0) > 10e6, 'process metrics: resident memory');
  t.ok((sample(body, 'process_cpu_seconds_total') ?? 0) > 0, 'process metrics: CPU seconds');
  t.notEqual(sample(body, 'nodejs_eventloop_lag_seconds'), undefined, 'event loop lag');
  t.ok(body.includes('# TYPE nodejs_gc_duration_seconds histogram'), 'GC durations');
  t.ok(/^nodejs_active_handles\{type="[A-Za-z]+",instance="[^"]+"\} \d+$/m.test(body), 'active handles by type');
  await s.close();
});

test('rigd_event_loop_delay_seconds and rigd_db_commit_seconds move', async (t) => {
  const s = await startServer({ vpn: { cidr: '127.0.0.1/32' } });
  const host = new URL(s.url).host;
  const scrape = async () => (await http(`${s.url}/metrics`, { headers: { host } })).text;
  const before = await scrape();
  const commits = (body: string) => sample(body, 'rigd_db_commit_seconds_count') ?? NaN;
  const put = await http(`${s.url}/api/v1/rigs/rig1`, { method: 'PUT', headers: { host, 'content-type': 'application/x-www-form-urlencoded' }, body: 'rig_serial=S1' });
  t.equal(put.status, 200, 'a report');
  // The sampler's first tick only starts its clock: let it tick a few times before the block, or a
  // block before that tick is never measured.
  await sleep(50);
  // The event loop held for 80 ms: the 10 ms sampling timer runs at least 70 ms late once.
  const until = performance.now() + 80;
  while (performance.now() < until);
  const after = await scrape();
  t.ok(commits(after) >= commits(before) + 1, `the report's COMMIT timed (${commits(before)} -> ${commits(after)})`);
  const count = sample(after, 'rigd_event_loop_delay_seconds_count') ?? 0;
  const under50ms = sample(after, 'rigd_event_loop_delay_seconds_bucket{le="0.05"}') ?? Infinity;
  t.ok(count > (sample(before, 'rigd_event_loop_delay_seconds_count') ?? 0), `event-loop samples keep coming (${count})`);
  t.ok(under50ms < count, `the 80 ms block is seen: ${count - under50ms} sample(s) over 50 ms`);
  t.equal(sample(after, 'rigd_event_loop_delay_seconds_bucket{le="+Inf"}'), count, 'buckets and count agree');
  await s.close();
});

test('two apps in one process keep their own counts', async (t) => {
  const a = await startServer({ vpn: { cidr: '127.0.0.0/8' } });
  const b = await startServer({ vpn: { cidr: '127.0.0.0/8' } });
  const host = (u: string) => new URL(u).host;
  const put = await http(`${a.url}/api/v1/rigs/rig1`, {
    method: 'PUT',
    headers: { host: host(a.url), 'content-type': 'application/x-www-form-urlencoded' },
    body: 'rig_serial=S1',
  });
  t.equal(put.status, 200, 'a report to the first app');
  const [ma, mb] = await Promise.all([a, b].map((s) => http(`${s.url}/metrics`, { headers: { host: host(s.url) } })));
  t.equal(sample(ma.text, 'rigd_rig_reports_total'), 1, 'first app: 1 report');
  t.equal(sample(mb.text, 'rigd_rig_reports_total'), 0, 'second app: none');
  t.ok(sample(mb.text, 'process_resident_memory_bytes'), 'both have the process metrics');
  await Promise.all([a.close(), b.close()]);
});

test('rigd_write_errors_total counts writes the database failed, not refusals thrown inside a write', async (t) => {
  const s = await startServer();
  const { sequelize } = s.app.db;
  const before = sample(await s.app.metrics.render(), 'rigd_write_errors_total');
  t.equal(before, 0, 'no write error yet');
  await s.app.db.writes
    .run((transaction) => sequelize.query('INSERT INTO no_such_table (id) VALUES (1)', { transaction }))
    .then(() => t.fail('the write should fail'), (err) => t.match(String(err), /no such table|relation "no_such_table" does not exist/, 'the database refused the write'));
  await s.app.db.writes
    .run(async () => {
      throw new NotFound('rig', 'rig_not_found');
    })
    .catch(() => undefined);
  t.equal(sample(await s.app.metrics.render(), 'rigd_write_errors_total'), 1, 'one write error: the database failure only');
  await s.close();
});

test('every series carries the node\'s instance id as its instance label', async (t) => {
  const s = await startServer({ vpn: { cidr: '127.0.0.0/8' }, cluster: { instance_id: 'gw-north:3000' } });
  try {
    const res = await http(`${s.url}/metrics`, { headers: { host: new URL(s.url).host } });
    t.equal(s.app.instanceId, 'gw-north:3000', 'the app\'s instance id is cluster.instance_id');
    const samples = res.text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    t.ok(samples.length > 50, `${samples.length} samples`);
    const without = samples.filter((l) => !/[{,]instance="gw-north:3000"[,}]/.test(l));
    t.deepEqual(without, [], 'no sample without instance="gw-north:3000"');
    t.equal(promtool(['check', 'metrics'], res.text).output, '', 'promtool check metrics: still no lint warning');
  } finally {
    await s.close();
  }
});

test('with cluster.instance_id empty, the instance label is "<hostname>:<port>"', async (t) => {
  const s = await startServer({ vpn: { cidr: '127.0.0.0/8' }, server: { port: 3999 } });
  try {
    const res = await http(`${s.url}/metrics`, { headers: { host: new URL(s.url).host } });
    t.equal(s.app.instanceId, `${hostname()}:3999`, 'instance id from the host name and server.port');
    t.match(res.text, new RegExp(`^rigd_rig_reports_total\\{instance="${hostname().replace(/[.]/g, '\\.')}:3999"\\} 0$`, 'm'), 'as the label');
  } finally {
    await s.close();
  }
});

test('rigd_ingest_queue_depth counts capture jobs only; rigd_jobs counts every kind', async (t) => {
  const s = await startServer({ vpn: { cidr: '127.0.0.1/32' } });
  const host = new URL(s.url).host;
  // A job of another kind (a notification waiting for its receiver), not due for an hour.
  await s.app.db.writes.run((transaction) => enqueue('notify', { to: 'nowhere' }, { transaction, runAfter: new Date(Date.now() + 3_600_000) }));
  const body = (await http(`${s.url}/metrics`, { headers: { host } })).text;
  t.equal(sample(body, 'rigd_jobs{state="queued"}'), 1, 'rigd_jobs: the queued notification');
  t.equal(sample(body, 'rigd_ingest_queue_depth'), 0, 'rigd_ingest_queue_depth: no capture waiting');
  await s.close();
});
