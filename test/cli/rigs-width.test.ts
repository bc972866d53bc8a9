// Plain `rigd rigs` on a terminal fits its width: at 80 columns with ordinary data every line fits
// (the least important columns, LAN IP and VPN ADDRESS, give way); a 60-character branch is shortened
// with "…" where it must be and hides no column at 120 and 160. Into a pipe the table is whole, for scripts.
// Real processes: bin/rigd under script(1), a pseudo-terminal sized with stty.
import test from 'tape';
import { spawn } from 'node:child_process';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { RIGD, rigd, rigdEnv } from '../helpers/cli.ts';
import { clockFrom } from '../helpers/clock-from.ts';
import { testConfig } from '../helpers/server.ts';

const LONG_BRANCH = 'feature/very-long-branch-name-that-goes-on-and-on-and-on-xyz'; // 60 characters

/** Rigs reported at fixed distances from one moment; the environment of a command whose clock starts there. */
async function seed(withLongBranch: boolean): Promise<() => Record<string, string>> {
  const config = testConfig();
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const seeded = Date.now();
  let at = seeded;
  const rigs = new RigService(db, config, { now: () => new Date(at) });
  const report = (id: string, agoS: number, extra: Record<string, string> = {}) => {
    at = seeded - agoS * 1000;
    return rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.100.105', software_version: '2.0.3', git_branch: 'main', gpsd_latitude: '52.52', gpsd_longitude: '13.405', ...extra }, '10.144.3.3');
  };
  await report('rig-001', 10);
  await report('rig-002', 20 * 60, { git_branch: 'dev', software_version: '2.1.0-rc.1' });
  await report('rig-003', 3 * 3600);
  if (withLongBranch) await report('rig-004', 30, { git_branch: LONG_BRANCH });
  await db.writes.run((transaction) => db.models.Rig.update({ current_project: 'survey-7' }, { where: { id: 'rig-001' }, transaction }));
  await db.close();
  return () => ({ RIGD_DATA_DIR: config.data_dir, ...clockFrom(seeded) });
}

/** `rigd rigs` on a pseudo-terminal of `columns`; its lines. */
function onTerminal(env: Record<string, string>, columns: number): Promise<string[]> {
  const cmd = `stty cols ${columns} rows 40; exec ${process.execPath} ${RIGD} rigs`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: rigdEnv({ ...env, TERM: 'dumb' }), stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(out.replace(/\r/g, '').trimEnd().split('\n')) : reject(new Error(`rigd rigs exited ${code}: ${out}`))));
  });
}

const widest = (lines: string[]) => Math.max(...lines.map((l) => [...l].length));
const columnsOf = (header: string) => header.trim().split(/\s{2,}/);

test('rigd rigs at 80 columns with ordinary data: every line fits', async (t) => {
  const env = await seed(false);
  const piped = (await rigd(['rigs'], { env: env() })).stdout.trimEnd().split('\n');
  t.ok(widest(piped) > 80, `into a pipe the table is whole (${widest(piped)} characters): scripts get every column`);
  t.deepEqual(columnsOf(piped[0]), ['STATUS', 'ID', 'LAN IP', 'VPN ADDRESS', 'BRANCH (VERSION)', 'LAST REPORT', 'PROJECT'], 'into a pipe: every column');
  const lines = await onTerminal(env(), 80);
  t.ok(widest(lines) <= 80, `80 columns: no line wider (widest ${widest(lines)})`);
  t.deepEqual(columnsOf(lines[0]), ['STATUS', 'ID', 'BRANCH (VERSION)', 'LAST REPORT', 'PROJECT'], 'the least important columns give way: LAN IP, then VPN ADDRESS');
  t.match(lines[1], /^online\s+rig-001\s+main \(2\.0\.3\)\s+less than a minute ago\s+survey-7$/, 'an online rig: nothing shortened');
  t.equal(lines.length, 4, 'one line per rig: nothing wraps');
});

test('rigd rigs with a 60-character branch at 80, 120 and 160 columns: shortened, not hiding columns', async (t) => {
  const env = await seed(true);
  for (const columns of [80, 120, 160]) {
    const lines = await onTerminal(env(), columns);
    t.ok(widest(lines) <= columns, `${columns} columns: no line wider (widest ${widest(lines)})`);
    const header = columnsOf(lines[0]);
    t.ok(['STATUS', 'ID', 'BRANCH (VERSION)', 'LAST REPORT'].every((c) => header.includes(c)), `${columns}: status, id, branch and last report (${header.join(', ')})`);
    if (columns >= 120) t.deepEqual(header, ['STATUS', 'ID', 'LAN IP', 'VPN ADDRESS', 'BRANCH (VERSION)', 'LAST REPORT', 'PROJECT'], `${columns}: every column`);
    const long = lines.find((l) => l.includes('rig-004')) ?? '';
    if (columns < 160) t.match(long, /feature\/very-long-branch[^ ]*…/, `${columns}: the long branch shortened with …`);
    else t.ok(long.includes(`${LONG_BRANCH} (2.0.3)`), `${columns}: the long branch whole, since it fits`);
    t.match(lines.find((l) => l.includes('rig-002')) ?? '', /dev \(2\.1\.0-rc\.1\)/, `${columns}: another rig's branch and version whole`);
  }
});
