// test: alone (MinIO timeout of 500 ms)
import test from 'tape';
import { startS3Peer } from '../helpers/s3-peer.ts';
import { createLogger } from '../../src/log.ts';
import { createServer } from '../../src/server/server.ts';
import { openApp } from '../../src/services/app.ts';
import { testConfig } from '../helpers/server.ts';
import { closedPort } from '../helpers/storage.ts';
import { withoutInstance } from '../helpers/promtool.ts';

async function serverWithLog(overrides: Parameters<typeof testConfig>[0] = {}) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger('info', (line) => lines.push(JSON.parse(line)));
  // Loopback counts as the VPN here, so a rig may report from 127.0.0.1 with Host 127.0.0.1.
  const config = testConfig({ vpn: { cidr: '127.0.0.0/8' }, ...overrides });
  const app = await openApp(config, { log });
  const server = await createServer(app, { log, port: 0, host: '127.0.0.1' });
  return { app, server, lines, close: async () => (await server.stop(), await app.close()) };
}

test('GET /healthz, GET /metrics and one log line per request', async (t) => {
  // log.reports each: the report's own line (by default answered reports are counted in a summary line).
  // No request counts as slow (log.slow_request_ms an hour): a slow poll is at info whatever it is,
  // and a busy machine can take over the default second for the first /healthz.
  const s = await serverWithLog({ log: { reports: 'each', slow_request_ms: 3_600_000 } });
  await s.app.storage.ensureBucket();
  const health = await s.server.inject({ url: '/healthz', remoteAddress: '127.0.0.1' });
  t.equal(health.statusCode, 200, 'healthy: 200');
  t.deepEqual(
    JSON.parse(health.payload).checks,
    { process: 'ok', database: 'ok', database_write: 'ok', storage: 'ok', disk_space: 'ok', data_files: 'ok', disk_write: 'ok', capture_rows: 'ok' },
    'every check ok',
  );

  const report = await s.server.inject({
    method: 'PUT',
    url: '/api/v1/rigs/rig7',
    headers: { host: '127.0.0.1', 'x-request-id': 'trace-42', 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'rig_serial=S7&software_version=2.0&git_branch=main',
    remoteAddress: '127.0.0.1',
  });
  t.equal(report.statusCode, 200, 'a rig report from the (loopback) VPN');

  const metrics = await s.server.inject({ url: '/metrics', remoteAddress: '127.0.0.1' });
  t.equal(metrics.statusCode, 200, '/metrics: 200');
  t.match(String(metrics.headers['content-type']), /^text\/plain; version=0\.0\.4/, 'Prometheus text format');
  const body = metrics.payload;
  for (const line of [
    'rigd_rig_reports_total 1',
    'rigd_rigs{status="online"} 1',
    'rigd_uploads{state="reserved"} 0',
    'rigd_ingest_queue_depth 0',
    'rigd_captures{state="ingested"} 0',
    '# TYPE rigd_job_duration_seconds histogram',
    'rigd_rig_report_duration_seconds_count 1',
    'rigd_http_request_duration_seconds_count{method="PUT",route="/api/v1/rigs/{id}",status="200"} 1',
  ]) {
    t.ok(body.split('\n').map(withoutInstance).includes(line), `metrics: ${line}`);
  }
  t.match(body.split('\n').map(withoutInstance).join('\n'), /^rigd_http_request_duration_seconds_bucket\{le="\+Inf",method="GET",route="\/healthz",status="200"\} 1$/m, 'latency histogram of /healthz');

  const reqLine = s.lines.find((l) => l.msg === 'request' && l.path === '/api/v1/rigs/rig7');
  t.ok(reqLine, 'the report was logged');
  t.deepEqual(
    reqLine && [reqLine.method, reqLine.status, reqLine.request_id, reqLine.client, typeof reqLine.duration_ms, reqLine.level],
    ['PUT', 200, 'trace-42', '127.0.0.1', 'number', 'info'],
    'method, status, request id, client, duration',
  );
  t.deepEqual(
    s.lines.filter((l) => l.msg === 'request').map((l) => l.path),
    ['/api/v1/rigs/rig7'],
    'one line per request at info: the /healthz and /metrics polls are logged at debug',
  );

  const outside = await s.server.inject({ url: '/metrics', remoteAddress: '192.0.2.7' });
  t.equal(outside.statusCode, 403, 'a client outside the VPN and loopback: 403');
  const outsideHealth = await s.server.inject({ url: '/healthz', remoteAddress: '192.0.2.7' });
  t.equal(outsideHealth.statusCode, 403, '/healthz too');
  await s.close();
});

test('GET /healthz is 503 and says why when storage does not answer', async (t) => {
  const port = await closedPort();
  const s = await serverWithLog({
    storage: { driver: 'minio', minio: { endpoint: '127.0.0.1', port, access_key: 'k'.repeat(8), secret_key: 's'.repeat(8), timeout_ms: 500 } },
  });
  const res = await s.server.inject({ url: '/healthz', remoteAddress: '127.0.0.1' });
  t.equal(res.statusCode, 503, '503');
  const body = JSON.parse(res.payload);
  t.equal(body.status, 'unavailable', 'status unavailable');
  t.deepEqual(body.failing, ['storage'], 'names the failing check');
  t.equal(body.checks.database, 'ok', 'database still ok');
  t.match(body.checks.storage, /storage|ECONNREFUSED/, `storage check says why: ${body.checks.storage}`);
  await s.close();
});

test('GET /healthz is 503 while the MinIO bucket does not exist (storage answers, every upload would fail)', async (t) => {
  const peer = await startS3Peer();
  const s = await serverWithLog({
    storage: { driver: 'minio', minio: { endpoint: peer.endpoint, port: peer.port, access_key: peer.accessKey, secret_key: peer.secretKey, timeout_ms: 3000 } },
  });
  try {
    const res = await s.server.inject({ url: '/healthz', remoteAddress: '127.0.0.1' });
    const body = JSON.parse(res.payload);
    t.deepEqual([res.statusCode, body.failing], [503, ['storage']], 'no bucket: 503 naming storage');
    t.match(String(body.checks.storage), /bucket captures does not exist/, `says which bucket: ${body.checks.storage}`);
    await s.app.storage.ensureBucket();
    const after = await s.server.inject({ url: '/healthz', remoteAddress: '127.0.0.1' });
    t.deepEqual([after.statusCode, JSON.parse(after.payload).checks.storage], [200, 'ok'], 'once the bucket is there: 200');
  } finally {
    await s.close();
    await peer.close();
  }
});
