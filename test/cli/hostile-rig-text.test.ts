// Rig text holding terminal commands (a window title change, a screen clear with a cursor move, an
// OSC 8 hyperlink, C1 controls, a carriage return and backspaces that would overwrite another rig's
// row) in the operator's terminal, through real child processes. A report carrying them is refused
// (400); rows that hold them anyway (written by another version, or a copied database) are shown
// escaped by `rigd rigs show`, `rigd rigs history` and `rigd rigs`, never sent raw; --json keeps
// the exact text.
import test from 'tape';
import { terminalText } from '../../src/cli/terminal-text.ts';
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

/** Characters a report may hold (not \p{C}) that show as nothing: a serial with them looks like another rig's. */
const INVISIBLE = ['\u034f', '\u115f', '\u3164', '\ufe0f', '\u{e0101}', '\u180b'];

test('invisible characters a report may hold are shown escaped, so one rig\'s serial cannot look like another\'s', async (t) => {
  const app = await openApp(config);
  try {
    for (const [i, c] of INVISIBLE.entries()) await app.rigs.report(`ghost${i}`, { rig_serial: `S1${c}`, software_version: '1.0', git_branch: `main${c}` }, `10.144.203.${10 + i}`);
  } finally {
    await app.close();
  }
  for (const [i, c] of INVISIBLE.entries()) {
    const hex = c.codePointAt(0)!.toString(16);
    const shown = hex.length > 4 ? `\\u{${hex}}` : `\\u${hex.padStart(4, '0')}`;
    const res = await rigd(['rigs', 'show', `ghost${i}`], { env });
    t.ok(res.stdout.includes(`serial       S1${shown}\n`), `rigd rigs show: the serial S1 + U+${hex.toUpperCase()} shows as S1${shown}`);
    const json = JSON.parse((await rigd(['rigs', 'show', `ghost${i}`, '--json'], { env })).stdout) as { serial: string };
    t.equal(json.serial, `S1${c}`, '--json: the exact serial');
  }
  const list = await rigd(['rigs'], { env });
  t.ok(list.stdout.includes('main\\u3164 (1.0)'), 'rigd rigs: the branch with a filler shown escaped');
  t.notOk(/[\u034f\u115f\u3164\u180b\ufe0f\u{e0101}]/u.test(list.stdout), 'rigd rigs: none of them raw');
});

test('an emoji keeps its presentation selector; a flag of tag characters and a selector after a letter do not', (t) => {
  t.equal(terminalText('\u2764\ufe0f ok'), '\u2764\ufe0f ok', 'U+2764 U+FE0F (red heart) kept');
  t.equal(terminalText('1\ufe0f\u20e3'), '1\ufe0f\u20e3', 'a keycap kept');
  t.equal(terminalText('a\ufe0f'), 'a\\ufe0f', 'a selector after a letter escaped');
  t.equal(terminalText('x\u{e0067}\u{e0062}'), 'x\\u{e0067}\\u{e0062}', 'tag characters escaped');
  t.equal(terminalText('e\u0301'), 'e\u0301', 'a combining accent kept');
  t.end();
});

test('--json: C1 controls, DEL and characters that show as nothing are written as \\u escapes; parsed, the text is exact', async (t) => {
  const HIDDEN_RAW = /[\u007f-\u009f\u2028\u2029]|\p{Default_Ignorable_Code_Point}/u;
  for (const args of [['rigs', '--json'], ['rigs', 'show', 'evil', '--json'], ['rigs', 'history', 'evil', '--json'], ['rigs', 'show', 'ghost3', '--json']]) {
    const res = await rigd(args, { env });
    t.equal(res.code, 0, `rigd ${args.join(' ')}: exit 0 ${res.stderr}`);
    t.notOk(HIDDEN_RAW.test(res.stdout), `rigd ${args.join(' ')}: none raw`);
  }
  const show = JSON.parse((await rigd(['rigs', 'show', 'evil', '--json'], { env })).stdout) as { version: string };
  t.equal(show.version, REPORT.software_version, 'rigs show evil --json: the version with its C1 controls, exact');
  const raw = (await rigd(['rigs', 'show', 'evil', '--json'], { env })).stdout;
  t.ok(raw.includes('\\u009b31m\\u0085'), 'shown as \\u009b and \\u0085');
});
