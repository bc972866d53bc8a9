// rigd doctor's server, upload_host and disk_space checks, as child processes: each finding with its fix.
import test from 'tape';
import http from 'node:http';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { rigd, doctorLine as line } from '../helpers/cli.ts';
import { serveProcess } from '../helpers/serve-process.ts';
import { closedPort } from '../helpers/storage.ts';
import { tmpDir } from '../helpers/tmp.ts';

const VPN = { RIGD_VPN_CIDR: '127.0.0.0/8', RIGD_VPN_HOST: 'localhost' };

async function installed(): Promise<string> {
  const dataDir = tmpDir();
  const m = await rigd(['migrate'], { env: { RIGD_DATA_DIR: dataDir } });
  if (m.code !== 0) throw new Error(m.stderr);
  mkdirSync(path.join(dataDir, 'objects', 'captures'), { recursive: true });
  return dataDir;
}

/** The "fix:" line right under a check's line. */
const fixOf = (out: string, check: string) => {
  const lines = out.split('\n');
  const i = lines.indexOf(line(out, check));
  return i >= 0 && /^\s+fix: /.test(lines[i + 1] ?? '') ? lines[i + 1].trim() : '';
};

test('doctor server check: rigd answering, nothing listening, another program on the port', async (t) => {
  const dataDir = await installed();
  const port = await closedPort();
  const env = { RIGD_DATA_DIR: dataDir, RIGD_SERVER_PORT: String(port), ...VPN };

  const none = await rigd(['doctor'], { env });
  t.equal(none.code, 0, `no server: a warning, exit 0 ${none.stderr}`);
  t.equal(line(none.stdout, 'server'), `warn  server         nothing listens on 127.0.0.1:${port} (server.host, server.port): rigd serve is not running`, 'server.host 0.0.0.0 is tried on 127.0.0.1');
  t.match(fixOf(none.stdout, 'server'), /^fix: start it: systemctl start rigd; .*journalctl -u rigd -p err/, 'with its fix');

  const serve = await serveProcess(env, ['--host', '0.0.0.0']);
  try {
    const up = await rigd(['doctor', '--json'], { env });
    const report = JSON.parse(up.stdout);
    const server = report.checks.find((c: { check: string }) => c.check === 'server');
    t.deepEqual(server, { check: 'server', status: 'ok', message: `rigd serve answers on 127.0.0.1:${port}, /healthz ok` }, 'rigd serve running: ok (--json)');
  } finally {
    t.equal(await serve.stop(), 0, 'serve stopped');
  }

  const other = http.createServer((_, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not here</h1>'));
  await new Promise<void>((resolve) => other.listen(port, '127.0.0.1', resolve));
  try {
    const res = await rigd(['doctor'], { env });
    t.equal(res.code, 1, 'another program on the port: exit 1');
    t.equal(line(res.stdout, 'server'), `fail  server         127.0.0.1:${port} answers, but not as rigd (GET /healthz: HTTP 404)`, 'says so');
    t.match(fixOf(res.stdout, 'server'), /^fix: another program holds that port/, 'with its fix');
  } finally {
    other.close();
  }
});

test('doctor upload_host and disk_space checks', async (t) => {
  const dataDir = await installed();
  const port = String(await closedPort());
  const base = { RIGD_DATA_DIR: dataDir, RIGD_SERVER_PORT: port, RIGD_VPN_CIDR: '127.0.0.0/8' };

  const resolves = await rigd(['doctor'], { env: { ...base, RIGD_VPN_HOST: 'localhost' } });
  t.match(line(resolves.stdout, 'upload_host'), /^ok\s+upload_host\s+localhost \(vpn\.host, where rigs upload\) resolves to .*(127\.0\.0\.1|::1)/, 'vpn.host resolving: ok, with its addresses');
  t.match(line(resolves.stdout, 'disk_space'), /^ok\s+disk_space\s+\d+ MiB free on the file system of .* \(server\.min_free_mb: 64\)$/, 'disk space over server.min_free_mb: ok');

  const unknown = await rigd(['doctor'], { env: { ...base, RIGD_VPN_HOST: 'rigd-upload.invalid' } });
  t.equal(unknown.code, 0, `a name that does not resolve: a warning, exit 0 ${unknown.stdout}`);
  t.equal(line(unknown.stdout, 'upload_host'), 'warn  upload_host    rigd-upload.invalid (vpn.host, where rigs upload) does not resolve from here (ENOTFOUND)', 'says which name and which key');
  t.match(fixOf(unknown.stdout, 'upload_host'), /^fix: make the VPN's DNS .*"10\.144\.0\.1 rigd-upload\.invalid".* or set vpn\.host to that address$/, 'with its fix');

  const literal = await rigd(['doctor'], { env: { ...base, RIGD_VPN_HOST: 'rigd-upload.invalid', RIGD_STORAGE_PUBLIC_URL: 'http://10.144.180.1:3000' } });
  t.match(line(literal.stdout, 'upload_host'), /^ok\s+upload_host\s+rigs upload to 10\.144\.180\.1 \(storage\.public_url\), an address$/, 'storage.public_url wins over vpn.host; an address needs no lookup');

  const full = await rigd(['doctor'], { env: { ...base, RIGD_VPN_HOST: 'localhost', RIGD_SERVER_MIN_FREE_MB: '999999999' } });
  t.equal(full.code, 0, 'less free than server.min_free_mb: a warning, exit 0');
  t.match(line(full.stdout, 'disk_space'), /^warn\s+disk_space\s+\d+ MiB free on the file system of .*, under server\.min_free_mb \(999999999\): rigd refuses writes \(503 disk_full\) and \/healthz fails$/, 'says the threshold and what happens');
  t.match(fixOf(full.stdout, 'disk_space'), /^fix: free space there \(df -h /, 'with its fix');
});
