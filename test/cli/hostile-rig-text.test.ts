// Rig text holding terminal commands (a window title change, a screen clear with a cursor move, an
// OSC 8 hyperlink, C1 controls, a carriage return and backspaces that would overwrite another rig's
// row) in the operator's terminal, through real child processes. A report carrying them is refused
// (400); rows that hold them anyway (written by another version, or a copied database) are shown
// escaped by `rigd rigs show`, `rigd rigs history` and `rigd rigs`, never sent raw; --json keeps
// the exact text.
import test from 'tape';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

const TITLE = '\u001b]0;rig1 is fine\u0007';
const CLEAR = '\u001b[2J\u001b[H';
const LINK = '\u001b]8;;http://evil.example/\u001b\\click\u001b]8;;\u001b\\';
const OVERWRITE = '\r\b\b\bS1';
const C1 = '\u009b31m\u0085';
const REPORT = { rig_serial: `S${TITLE}${OVERWRITE}`, software_version: `1.0${LINK}${C1}`, git_branch: `main${CLEAR}`, local_ip: '192.168.1.9', gpsd_latitude: '1', gpsd_longitude: '2' };
/** Any control character a terminal acts on (the newline that ends each line aside). */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const config = testConfig();
const env = { RIGD_DATA_DIR: config.data_dir };

test('setup: a hostile rig and a plain one report', async (t) => {
  const app = await openApp(config);
  try {
    await app.rigs.report('evil', REPORT, '10.144.203.2').then(
      () => t.fail('the hostile report was accepted'),
      (e: Error) => t.match(e.message, /must be printable text/, `the report is refused: ${e.message}`),
    );
    await app.rigs.report('evil', { rig_serial: 'S9', software_version: '1.0', git_branch: 'main' }, '10.144.203.2');
    await app.rigs.report('rig1', { rig_serial: 'S1', software_version: '1.0', git_branch: 'main' }, '10.144.203.3');
    // As another version or a copied database may hold them: the renderers must not trust the report validation.
    const text = { serial: REPORT.rig_serial, branch: REPORT.git_branch, version: REPORT.software_version };
    await app.db.writes.run(async (transaction) => {
      await app.db.models.Rig.update(text, { where: { id: 'evil' }, transaction });
      await app.db.models.RigReport.update(text, { where: { rig_id: 'evil' }, transaction });
    });
    const stored = await app.rigs.get('evil');
    t.deepEqual([stored.serial, stored.branch, stored.version], [REPORT.rig_serial, REPORT.git_branch, REPORT.software_version], 'held exactly');
  } finally {
    await app.close();
  }
});

test('rigd rigs show: the hostile text escaped, never raw; --json exact', async (t) => {
  const res = await rigd(['rigs', 'show', 'evil'], { env });
  t.equal(res.code, 0, `exit 0 ${res.stderr}`);
  t.notOk(RAW.test(res.stdout), 'no raw control character on stdout');
  t.ok(res.stdout.includes('S\\x1b]0;rig1 is fine\\x07\\x0d\\x08\\x08\\x08S1'), 'serial: the title change, CR and backspaces shown escaped');
  t.ok(res.stdout.includes('main\\x1b[2J\\x1b[H (1.0\\x1b]8;;http://evil.example/\\x1b\\click\\x1b]8;;\\x1b\\\\x9b31m\\x85)'), 'branch (version): the clear, the hyperlink and C1 shown escaped');
  const json = await rigd(['rigs', 'show', 'evil', '--json'], { env });
  const d = JSON.parse(json.stdout) as { serial: string; branch: string; version: string };
  t.deepEqual([d.serial, d.branch, d.version], [REPORT.rig_serial, REPORT.git_branch, REPORT.software_version], '--json: the exact text');
});

test('rigd rigs history and rigd rigs: the hostile text escaped, each row one line', async (t) => {
  for (const args of [['rigs', 'history', 'evil'], ['rigs']]) {
    const res = await rigd(args, { env });
    t.equal(res.code, 0, `rigd ${args.join(' ')}: exit 0 ${res.stderr}`);
    t.notOk(RAW.test(res.stdout), `rigd ${args.join(' ')}: no raw control character`);
    t.ok(res.stdout.includes('main\\x1b[2J\\x1b[H'), `rigd ${args.join(' ')}: the branch shown escaped`);
    t.equal(res.stdout.trimEnd().split('\n').length, args.length === 1 ? 3 : 2, `rigd ${args.join(' ')}: a header and one line per row`);
  }
});
