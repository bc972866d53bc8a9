// The logging policy of rig reports, on a `bin/rigd serve` child with reports from a rig's real VPN
// address (a network namespace): an answered report is no info line, a "reports" summary line counts
// them once per log.summary_interval_s; a refused report, every other request and a slow one keep
// their info line; log.reports each brings the per-report lines back; at debug they are there too.
import test from 'tape';
import { serveProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { createHosts, type Hosts } from '../helpers/netns.ts';
import { tmpDir } from '../helpers/tmp.ts';

const RIG = { name: 'rig', addr: '10.144.47.2', gw: '10.144.47.1' };
const BODY = 'rig_serial=SN-LOG&gpsd_latitude=47.37&gpsd_longitude=8.54&local_ip=192.168.8.20&software_version=3.1.0&git_branch=main';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * No request counts as slow (log.slow_request_ms an hour) but in the run that asks for it: a slow
 * report is at info whatever else, and a busy machine can take over the default second for one.
 */
const NEVER_SLOW = { RIGD_LOG_SLOW_REQUEST_MS: '3600000' };

type Line = Record<string, unknown>;

/** Five reports answered 200, one refused (no rig_serial: 400) and one other request, then the lines. */
async function run(hosts: Hosts, env: Record<string, string>, t: test.Test): Promise<Line[]> {
  const serve: ServeProcess = await serveProcess({ RIGD_DATA_DIR: tmpDir(), RIGD_LOG_SUMMARY_INTERVAL_S: '1', ...NEVER_SLOW, ...env }, ['--port', '0', '--host', '0.0.0.0']);
  try {
    const port = new URL(serve.url).port;
    const put = (id: string, body: string) =>
      hosts.request('rig', { url: `http://${RIG.gw}:${port}/api/v1/rigs/${id}`, method: 'PUT', headers: { host: `${RIG.gw}:${port}`, 'content-type': 'application/x-www-form-urlencoded' }, body });
    for (let i = 0; i < 5; i++) t.equal((await put(`logrig${i}`, BODY)).status, 200, `report ${i}: 200`);
    t.equal((await put('logrig0', 'gpsd_latitude=47.37')).status, 400, 'a report without rig_serial: 400');
    t.equal((await fetch(`${serve.url}/api/v1/openapi.json`)).status, 200, 'another request: 200');
    // The summary comes within one interval (1 s) of the reports; the stop line ends the output.
    for (let i = 0; i < 100 && !serve.output().includes('"msg":"reports"'); i++) await sleep(100);
    t.equal(await serve.stop(), 0, 'stopped: exit 0');
  } catch (err) {
    await serve.stop('SIGKILL');
    throw err;
  }
  return serve
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Line);
}

const reportLines = (lines: Line[]) => lines.filter((l) => l.msg === 'request' && String(l.path).startsWith('/api/v1/rigs/'));

test('rig report logging: summary by default, each on request, debug shows them, slow ones at info', async (t) => {
  const hosts = await createHosts([RIG]);
  try {
    const quiet = await run(hosts, { RIGD_LOG_LEVEL: 'info' }, t);
    const reports = reportLines(quiet);
    t.deepEqual(
      reports.map((l) => `${l.level} ${l.status}`),
      ['info 400'],
      'log.level info: no line for the 5 answered reports, the refused one at info',
    );
    t.deepEqual(
      quiet.filter((l) => l.msg === 'request' && l.path === '/api/v1/openapi.json').map((l) => l.level),
      ['info'],
      'any other request: its line at info',
    );
    const summaries = quiet.filter((l) => l.msg === 'reports');
    t.ok(summaries.length >= 1 && summaries.every((l) => l.level === 'info'), 'the "reports" summary line(s), at info');
    const sum = (k: string) => summaries.reduce((n, l) => n + Number(l[k] ?? 0), 0);
    t.deepEqual([sum('2xx'), sum('4xx'), sum('5xx')], [5, 1, 0], 'they count 5 x 2xx, 1 x 4xx, 0 x 5xx');
    t.ok(summaries.every((l) => typeof l.p50_ms === 'number' && typeof l.p99_ms === 'number' && Number(l.p50_ms) <= Number(l.p99_ms) && Number(l.p99_ms) > 0), 'with p50_ms <= p99_ms');

    const each = await run(hosts, { RIGD_LOG_LEVEL: 'info', RIGD_LOG_REPORTS: 'each' }, t);
    t.deepEqual(
      reportLines(each).map((l) => `${l.level} ${l.status}`),
      ['info 200', 'info 200', 'info 200', 'info 200', 'info 200', 'info 400'],
      'log.reports each: one info line per report again',
    );
    t.deepEqual(each.filter((l) => l.msg === 'reports'), [], 'and no summary line');

    const debug = await run(hosts, { RIGD_LOG_LEVEL: 'debug' }, t);
    t.deepEqual(
      reportLines(debug).map((l) => `${l.level} ${l.status}`),
      ['debug 200', 'debug 200', 'debug 200', 'debug 200', 'debug 200', 'info 400'],
      'log.level debug: each answered report at debug, the refused one at info',
    );

    const slow = await run(hosts, { RIGD_LOG_LEVEL: 'info', RIGD_LOG_SLOW_REQUEST_MS: '0' }, t);
    t.deepEqual(
      reportLines(slow).map((l) => `${l.level} ${l.status} ${l.slow}`),
      ['info 200 true', 'info 200 true', 'info 200 true', 'info 200 true', 'info 200 true', 'info 400 true'],
      'log.slow_request_ms 0 (every request slow): each report at info, marked slow',
    );
  } finally {
    await hosts.destroy();
  }
});
