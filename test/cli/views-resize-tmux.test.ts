// test: shares tmux (the default tmux server)
// `rigd rigs --watch` in a real terminal (tmux) resized from 120 to 80 columns: the view redraws
// with the columns that fit, and no line or fragment of the wider frame is left behind. One rig has
// a 60-character branch: it is shortened, and hides no other column.
import test from 'tape';
import { execFileSync } from 'node:child_process';
import { openDatabase } from '../../src/db/index.ts';
import { RigService } from '../../src/services/rigs/service.ts';
import { ROOT, RIGD } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';
import { databaseEnvWord } from '../helpers/dialect.ts';

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pane(session: string, ok: (text: string) => boolean, what: string): Promise<string> {
  const end = Date.now() + 60_000;
  let text = '';
  while (Date.now() < end) {
    text = tmux('capture-pane', '-p', '-t', session);
    if (ok(text)) return text;
    await sleep(100);
  }
  throw new Error(`pane never showed ${what}:\n${text}`);
}

test('rigd rigs --watch redraws cleanly when the terminal goes from 120 to 80 columns', async (t) => {
  const config = testConfig();
  const db = await openDatabase(config.data_dir, { url: config.database.url });
  const rigs = new RigService(db, config);
  for (const id of ['rig1', 'rig2', 'rig3']) {
    const branch = id === 'rig2' ? 'feature/very-long-branch-name-that-goes-on-and-on-and-on-xyz' : 'main';
    await rigs.report(id, { rig_serial: `S-${id}`, local_ip: '192.168.5.5', software_version: '2.0', git_branch: branch, gpsd_latitude: '52.52', gpsd_longitude: '13.405' }, '10.144.181.3');
  }
  await db.close();
  const session = `rigd-resize-${process.pid}`;
  const command = `cd ${ROOT} && env -u CI -u RIGD_DATABASE_URL RIGD_DATA_DIR=${config.data_dir} ${databaseEnvWord(config.data_dir)} ${process.execPath} ${RIGD} rigs --watch --interval 0.5; echo "rigd exited $?"; sleep 30`;
  tmux('new-session', '-d', '-s', session, '-x', '120', '-y', '30', command);
  try {
    const wide = await pane(session, (s) => s.includes('rig3') && s.includes('POSITION'), 'the table at 120');
    t.match(wide, /STATUS\s+ID\s+LAN IP\s+VPN NAME\s+BRANCH \(VERSION\)\s+LAST SEEN\s+POSITION\s+PROJECT/, '120 columns: every column, the long branch notwithstanding');
    t.match(wide, /^●.*rig2.*feature\/very-long[^ ]*…/m, 'the long branch shortened with …');
    t.ok(wide.split('\n').every((l) => [...l].length <= 120), 'no line over 120 cells');

    tmux('resize-window', '-t', session, '-x', '80', '-y', '30');
    // A whole frame: its header and its last row (a capture taken mid-redraw may hold only part of one).
    // The rigs reported before the view started: on a busy machine a minute may have gone by since.
    const seen = /(less than a minute|\d+ minutes?) ago/;
    const narrow = await pane(
      session,
      (s) => /^\s+STATUS\s+ID\s/m.test(s) && /^●.*rig3/m.test(s) && seen.test(s.split('\n').find((l) => /^●.*rig3/.test(l)) ?? '') && !s.includes('POSITION') && /^updated /m.test(s),
      'the table redrawn at 80',
    );
    const lines = narrow.split('\n');
    t.ok(lines.every((l) => [...l].length <= 80), 'no line over 80 cells');
    t.equal(lines.filter((l) => /^\s+STATUS\s+ID\s/.test(l)).length, 1, 'one header: nothing of the wide frame left');
    t.deepEqual(lines.filter((l) => l.startsWith('●')).map((l) => l.split(/\s+/)[2]), ['rig1', 'rig2', 'rig3'], 'each rig once');
    t.ok(lines.filter((l) => l.startsWith('●')).every((l) => seen.test(l)), 'each row keeps its last seen');
    const known = (l: string) => l.trim() === '' || /^3 rigs: /.test(l) || /^\s+STATUS\s+ID\s/.test(l) || l.startsWith('●') || /^updated /.test(l);
    t.deepEqual(lines.filter((l) => !known(l)), [], 'no fragment of the wider frame: every line is the summary, the header, a rig or the footer');
    tmux('send-keys', '-t', session, 'q');
    t.match(await pane(session, (s) => s.includes('rigd exited'), 'the exit'), /rigd exited 0/, 'q quits with exit 0');
  } finally {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // already gone
    }
  }
});
