// Rig text in wide characters (CJK, emoji), combining marks and long unbroken strings in the
// operator's tables: columns line up by terminal cells (a wide character takes two, a combining
// mark none), and a table fitted to a terminal never runs past its width (a line that wraps would
// push the other rigs' rows out of place). Plain output through a real child process; --json keeps
// the exact text.
import test from 'tape';
import stringWidth from 'string-width';
import { renderTable } from '../../src/cli/table.ts';
import { shorten } from '../../src/cli/views/columns.ts';
import { openApp } from '../../src/services/app.ts';
import { rigd } from '../helpers/cli.ts';
import { testConfig } from '../helpers/server.ts';

const WIDE = '日本語のブランチ';
const EMOJI = '🚀🚀1.0';
const COMBINING = 'cafe\u0301-e\u0301te\u0301';
const LONG = `b${'x'.repeat(127)}`;

/** The terminal cell where each column of `line` starts, given the text of each cell. */
function starts(line: string, cells: string[]): number[] {
  const out: number[] = [];
  let from = 0;
  for (const cell of cells) {
    const at = line.indexOf(cell, from);
    out.push(at < 0 ? -1 : stringWidth(line.slice(0, at)));
    from = at < 0 ? from : at + cell.length;
  }
  return out;
}

test('renderTable: columns start at the same terminal cell on every line, whatever the script', (t) => {
  const rows = [['rig1', 'main', 'x'], ['rig2', WIDE, 'y'], ['rig3', EMOJI, 'z'], ['rig4', COMBINING, 'w']];
  const lines = renderTable(['ID', 'BRANCH', 'LAST'], rows).trimEnd().split('\n');
  const last = lines.map((l, i) => starts(l, i === 0 ? ['ID', 'BRANCH', 'LAST'] : rows[i - 1])[2]);
  t.deepEqual(last, Array(5).fill(last[0]), `the third column starts at cell ${last[0]} on every line`);
  t.end();
});

test('renderTable fitted to 40 cells: no line is wider, wide text shortened by cells', (t) => {
  const rows = [['rig1', `${WIDE}${WIDE}${WIDE}`, '5 minutes ago'], ['rig2', `${EMOJI}${EMOJI}${EMOJI}${EMOJI}`, 'now'], ['rig3', LONG, 'now']];
  const lines = renderTable(['ID', 'BRANCH', 'LAST SEEN'], rows, { priorities: [0, 1, 0], width: 40 }).trimEnd().split('\n');
  t.equal(lines.length, 4, 'a header and three rows');
  for (const l of lines) t.ok(stringWidth(l) <= 40, `${stringWidth(l)} cells: ${l}`);
  t.ok(lines.slice(1).every((l) => /(ago|now)$/.test(l)), 'the last column is still shown on every row');
  t.equal(shorten(WIDE, 7), '日本語…', 'a wide text cut to 7 cells: three characters and the ellipsis');
  t.equal(shorten(COMBINING, 5), 'cafe\u0301…', 'never cut between a letter and its mark');
  t.end();
});

test('rigd rigs (a child process): rigs with wide, emoji, combining and long text line up; --json exact', async (t) => {
  const config = testConfig();
  const env = { RIGD_DATA_DIR: config.data_dir };
  const app = await openApp(config);
  try {
    await app.rigs.report('rig-a', { rig_serial: 'SA', software_version: '1.0', git_branch: 'main' }, '10.144.203.2');
    await app.rigs.report('rig-b', { rig_serial: 'SB', software_version: EMOJI, git_branch: WIDE }, '10.144.203.3');
    await app.rigs.report('rig-c', { rig_serial: 'SC', software_version: '2', git_branch: COMBINING }, '10.144.203.4');
  } finally {
    await app.close();
  }
  const res = await rigd(['rigs'], { env });
  t.equal(res.code, 0, `exit 0 ${res.stderr}`);
  const lines = res.stdout.trimEnd().split('\n');
  t.equal(lines.length, 4, 'a header and three rows');
  const branches = ['main (1.0)', `${WIDE} (${EMOJI})`, `${COMBINING} (2)`];
  const after = lines.slice(1).map((l, i) => {
    const at = l.indexOf(branches[i]);
    return at < 0 ? -1 : stringWidth(l.slice(0, at + branches[i].length)) + stringWidth(l.slice(at + branches[i].length).match(/^ */)![0]);
  });
  t.ok(after.every((n) => n > 0), 'every branch shown whole');
  t.deepEqual(after, Array(3).fill(after[0]), `the column after the branch starts at cell ${after[0]} on every row`);
  const json = JSON.parse((await rigd(['rigs', '--json'], { env })).stdout) as { id: string; branch: string; version: string }[] | { rigs: { id: string; branch: string; version: string }[] };
  const list = Array.isArray(json) ? json : json.rigs;
  const b = list.find((r) => r.id === 'rig-b');
  t.deepEqual([b?.branch, b?.version], [WIDE, EMOJI], '--json: the exact text');
});
