// test: shares tmux (the default tmux server)
// End to end in a real terminal: `rigd rigs --watch` in tmux against a running `rigd serve` while a
// rig reports. The server treats loopback as the VPN (vpn.cidr 127.0.0.0/8) and the rig reports from
// 127.0.0.1 with Host 127.0.0.1, which passes the VPN rule as a rig on 10.144.x.x would.
import test from 'tape';
import { execFileSync } from 'node:child_process';
import { ROOT, RIGD } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { databaseEnvWord } from '../helpers/dialect.ts';

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function pane(session: string, ok: (text: string) => boolean, what: string, escapes = false): Promise<string> {
  const end = Date.now() + 60_000;
  let text = '';
  while (Date.now() < end) {
    text = tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', session);
    if (ok(text)) return text;
    await sleep(100);
  }
  throw new Error(`pane never showed ${what}:\n${text}`);
}

test('rigd rigs --watch in tmux while a rig reports', async (t) => {
  const dataDir = tmpDir();
  const srv = await serveProcess({ RIGD_DATA_DIR: dataDir, RIGD_VPN_CIDR: '127.0.0.0/8' });
  const session = `rigd-watch-${process.pid}`;
  // CI=true (set by .ci/run) would make Ink print only the last frame and drop colour: unset it.
  const command = `cd ${ROOT} && env -u CI -u RIGD_DATABASE_URL -u NO_COLOR -u FORCE_COLOR RIGD_DATA_DIR=${dataDir} ${databaseEnvWord(dataDir)} ${process.execPath} ${RIGD} rigs --watch --interval 0.5; echo "rigd exited $?"; sleep 30`;
  tmux('new-session', '-d', '-s', session, '-x', '160', '-y', '30', command);
  try {
    const empty = await pane(session, (s) => s.includes('no rig has reported yet'), 'the empty table');
    t.match(empty, /^0 rigs: 0 online, 0 stale, 0 offline/m, 'first frame: summary of an empty fleet');
    t.match(empty, /s: sort · q: quit/, 'keys are shown (stdin is a terminal)');

    const res = await fetch(`${srv.url}/api/v1/rigs/rig42`, {
      method: 'PUT',
      headers: { host: '127.0.0.1', 'content-type': 'application/x-www-form-urlencoded' },
      body: 'rig_serial=S42&local_ip=192.168.4.2&software_version=3.1.0&git_branch=main&gpsd_latitude=52.52&gpsd_longitude=13.405',
    });
    t.equal(res.status, 200, 'the rig reports (from the loopback "VPN")');

    const live = await pane(session, (s) => s.includes('rig42'), 'the reporting rig');
    t.match(live, /^1 rig: 1 online, 0 stale, 0 offline · versions: main 3\.1\.0 ×1/m, 'summary updated without a keypress');
    t.match(live, /● online\s+rig42\s+192\.168\.4\.2\s+rig42\.rigs\.internal\s+main \(3\.1\.0\)\s+less than a minute ago\s+52\.5200,13\.4050/, 'the row');
    const coloured = tmux('capture-pane', '-p', '-e', '-t', session);
    const dotLine = coloured.split('\n').find((l) => l.includes('rig42')) ?? '';
    // tmux re-serialises attributes (e.g. ESC[0m ESC[32m ESC[49m ●): green foreground set before the dot.
    t.match(dotLine, /\u001b\[32m(\u001b\[[0-9;]*m)*●/, 'the dot is green on the terminal');

    tmux('send-keys', '-t', session, 's');
    await pane(session, (s) => s.includes('sorted by last seen'), 'the new order');
    t.pass('s switches the order to last seen');
    tmux('send-keys', '-t', session, 'q');
    const after = await pane(session, (s) => s.includes('rigd exited'), 'the exit');
    t.match(after, /rigd exited 0/, 'q quits with exit 0');
  } finally {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // already gone
    }
    await srv.stop();
  }
});
