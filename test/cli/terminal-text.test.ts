// Rig-chosen text (upload keys, rig id, serial, branch, version, project, capture keys and errors)
// holding ESC sequences, BEL, CR and bidi overrides: the plain output of `rigd uploads`, `rigd rigs`
// and `rigd captures` (child processes) shows them escaped and holds no raw control character;
// --json keeps the exact strings.
import test from 'tape';
import { terminalLines, terminalText } from '../../src/cli/terminal-text.ts';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

const NASTY = '\u001b[31mred\u0007\rX\u202e';
/** Every control character but the newline that ends each line. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;

test('terminalText escapes C0, DEL, C1 and bidi controls visibly; terminalLines keeps line breaks', (t) => {
  t.equal(terminalText('a\u001b[31mb\u0007c\rd\te\nf\u007f\u0085\u009b'), 'a\\x1b[31mb\\x07c\\x0dd\\x09e\\x0af\\x7f\\x85\\x9b');
  t.equal(terminalText('x\u202ey\u2066z\u200f\u061c\u2028'), 'x\\u202ey\\u2066z\\u200f\\u061c\\u2028');
  t.equal(terminalText('rig1/été ü 日本 ●'), 'rig1/été ü 日本 ●', 'printable Unicode is kept');
  t.equal(terminalLines('one\u001b\ntwo\r'), 'one\\x1b\ntwo\\x0d');
  t.end();
});

test('rigd uploads, rigs and captures: rig-chosen control characters never reach the terminal raw', async (t) => {
  const config = testConfig();
  const env = { RIGD_DATA_DIR: config.data_dir };
  const app = await openApp(config);
  const key = `rig1/${NASTY}.sqlite`;
  try {
    const r = await app.uploads.reserve({ key, size: '100' }, '10.144.0.9');
    await app.db.writes.run((transaction) => app.db.models.Upload.update({ project: `proj${NASTY}` }, { where: { id: r.id }, transaction }));
    // Rows as another version (or a copied database) may hold them: the renderers must not trust the report validation.
    await app.db.writes.run((transaction) =>
      app.db.models.Rig.create(
        { id: `rig${NASTY}`, serial: `S${NASTY}`, lan_ip: null, vpn_address: '10.144.0.9', version: `1.0${NASTY}`, branch: `main${NASTY}`, latitude: null, longitude: null, last_seen_at: new Date(), current_project: `p${NASTY}` },
        { transaction },
      ),
    );
    const q = await app.captures.queueObject({ key, etag: 'abc', size: 100, url: app.storage.objectUrl(key) });
    await app.db.writes.run((transaction) =>
      app.db.models.Job.update({ state: 'failed', error_code: 'not_sqlite', last_error: `bad header ${NASTY}` }, { where: { id: q.capture.job_id! }, transaction }),
    );
  } finally {
    await app.close();
  }

  for (const cmd of ['uploads', 'rigs', 'captures']) {
    const res = await rigd([cmd], { env });
    t.equal(res.code, 0, `rigd ${cmd}: exit 0 ${res.stderr}`);
    t.notOk(RAW.test(res.stdout), `rigd ${cmd}: no raw control character on stdout`);
    t.ok(res.stdout.includes('\\x1b[31mred\\x07\\x0dX\\u202e'), `rigd ${cmd}: the text is shown, escaped`);
    const lines = res.stdout.trimEnd().split('\n');
    t.equal(lines.length, 2, `rigd ${cmd}: a header and one row (a CR or newline in data splits no row)`);
    const json = await rigd([cmd, '--json'], { env });
    const text = JSON.stringify(JSON.parse(json.stdout));
    t.ok(text.includes(JSON.stringify(NASTY).slice(1, -1)), `rigd ${cmd} --json: the exact string, JSON-escaped`);
    t.notOk(/[\u0000-\u0009\u000b-\u001f]/.test(json.stdout), `rigd ${cmd} --json: no raw C0 either`);
  }
  const rigs = await rigd(['rigs'], { env });
  for (const field of ['rig\\x1b[31m', 'main\\x1b[31m', '1.0\\x1b[31m', 'p\\x1b[31m']) t.ok(rigs.stdout.includes(field), `rigd rigs shows ${field}…`);
  const captures = await rigd(['captures'], { env });
  t.ok(captures.stdout.includes('bad header \\x1b[31m'), 'rigd captures: the error is shown escaped');

  const missing = await rigd(['ingest', `nowhere/${NASTY}.sqlite`], { env });
  t.equal(missing.code, 1, 'rigd ingest of a missing object: exit 1');
  t.notOk(RAW.test(missing.stderr), 'its error line holds no raw control character');
});
