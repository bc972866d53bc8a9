// rigd doctor changes nothing: data_dir holds the same files, bytes and mtimes after it ran
// (a fresh install, and one where the database and the embedded store have been used).
// The one exception is the bytes of rigd.sqlite-shm: SQLite's shared-memory index of the WAL, which
// any reader of a WAL database (a read-only one included) may rebuild; it holds no data. Its
// existence, mode and owner are still compared.
import test from 'tape';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, lstatSync } from 'node:fs';
import path from 'node:path';
import { rigd } from '../helpers/cli.ts';
import { hasDatabase } from '../helpers/dialect.ts';
import { tmpDir } from '../helpers/tmp.ts';

/** Every entry under dir (dir itself included): type, mode, owner, size, mtime, and a file's sha256. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = lstatSync(p, { bigint: true });
    const rel = path.relative(dir, p) || '.';
    if (rel.endsWith('-shm')) {
      out[rel] = `${st.mode.toString(8)} ${st.uid}:${st.gid}`;
      return;
    }
    const sum = st.isFile() ? createHash('sha256').update(readFileSync(p)).digest('hex') : '';
    out[rel] = `${st.mode.toString(8)} ${st.uid}:${st.gid} ${st.size} mtime=${st.mtimeNs} ${sum}`;
    if (st.isDirectory()) for (const name of readdirSync(p).sort()) walk(path.join(p, name));
  };
  walk(dir);
  return out;
}

const VPN = { RIGD_VPN_CIDR: '127.0.0.0/8' };

test('doctor is read-only: data_dir byte-identical, same files, same mtimes', async (t) => {
  const fresh = tmpDir();
  const before = snapshot(fresh);
  const res = await rigd(['doctor'], { env: { RIGD_DATA_DIR: fresh, ...VPN } });
  t.ok(res.code === 0 || res.code === 1, `doctor ran ${res.stderr}`);
  t.deepEqual(snapshot(fresh), before, 'a fresh (empty) data_dir: untouched');

  const used = tmpDir();
  const env = { RIGD_DATA_DIR: used, ...VPN };
  const add = await rigd(['user', 'add', 'ops', '--email', 'ops@example.com', '--password-stdin'], { env, input: 'correct horse battery\n' });
  t.equal(add.code, 0, `a user added ${add.stderr}`);
  mkdirSync(path.join(used, 'objects', 'captures'), { recursive: true });
  const beforeUsed = snapshot(used);
  t.ok(hasDatabase(used), 'the database is there');
  const again = await rigd(['doctor'], { env });
  t.equal(again.code, 0, `doctor passes ${again.stdout}${again.stderr}`);
  t.deepEqual(snapshot(used), beforeUsed, 'a used data_dir: same files, bytes, modes, owners and mtimes');
});
