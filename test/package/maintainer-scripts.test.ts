// test: alone (package build)
// The package's maintainer scripts run against a scratch root (DPKG_ROOT, as dpkg --root sets it),
// with the system commands they call (adduser, chown, deb-systemd-helper, ...) replaced by stubs
// that log their arguments: who is created, what is enabled, when the service starts, what purge removes.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ENV_FILE } from '../../src/config/env-file.ts';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

const SCRIPTS = path.join(ROOT, 'packaging', 'deb');
const STUBS = ['getent', 'addgroup', 'adduser', 'install', 'chown', 'chmod', 'dpkg-statoverride', 'deb-systemd-helper', 'deb-systemd-invoke', 'systemctl'];

interface Box {
  root: string;
  log: string;
  stubs: string;
}

/** A scratch root with the shipped config in place and systemd "running"; stubs for every system command. */
function box(): Box {
  const dir = tmpDir('rigd-maint-');
  const root = path.join(dir, 'root');
  const stubs = path.join(dir, 'bin');
  const log = path.join(dir, 'calls.log');
  mkdirSync(stubs);
  for (const name of STUBS) {
    const file = path.join(stubs, name);
    // getent knows rigd once adduser/addgroup ran; install -d makes the directory it is given.
    let body = `echo "${name} $*" >> "$CALLS"\n`;
    if (name === 'getent') body += `[ -e "$STATE/$1" ] && exit 0\nexit 2\n`;
    if (name === 'addgroup') body += `touch "$STATE/group"\n`;
    if (name === 'adduser') body += `touch "$STATE/passwd"\n`;
    if (name === 'install') body += `for last; do :; done\nmkdir -p "$last"\n`;
    if (name === 'dpkg-statoverride') body += 'exit 1\n';
    writeFileSync(file, `#!/bin/sh\n${body}exit 0\n`);
    chmodSync(file, 0o755);
  }
  mkdirSync(path.join(root, 'etc/rigd'), { recursive: true });
  mkdirSync(path.join(root, 'usr/share/rigd'), { recursive: true });
  mkdirSync(path.join(root, 'run/systemd/system'), { recursive: true });
  mkdirSync(path.join(root, 'var/lib'), { recursive: true });
  copyFileSync(path.join(ROOT, 'config.example.yaml'), path.join(root, 'usr/share/rigd/config.yaml'));
  copyFileSync(path.join(ROOT, 'config.example.yaml'), path.join(root, 'etc/rigd/config.yaml'));
  return { root, log, stubs };
}

function run(b: Box, script: string, ...args: string[]): { code: number | null; stderr: string; calls: string[] } {
  writeFileSync(b.log, '');
  const res = spawnSync('sh', [path.join(SCRIPTS, script), ...args], {
    encoding: 'utf8',
    env: { PATH: `${b.stubs}:/usr/bin:/bin`, DPKG_ROOT: b.root, CALLS: b.log, STATE: path.dirname(b.log) },
  });
  return { code: res.status, stderr: res.stderr, calls: readFileSync(b.log, 'utf8').split('\n').filter(Boolean) };
}

test('postinst on a first install: system user, data_dir, config mode, enabled but not started', (t) => {
  const b = box();
  const res = run(b, 'postinst', 'configure', '');
  t.equal(res.code, 0, 'exits 0');
  t.ok(res.calls.includes('addgroup --system --quiet rigd'), 'system group rigd');
  t.ok(res.calls.some((c) => c.startsWith('adduser --system --quiet --ingroup rigd --home /var/lib/rigd --no-create-home --shell /usr/sbin/nologin')), 'system user rigd, no login');
  t.ok(res.calls.includes(`install -d -o rigd -g rigd -m 0750 ${b.root}/var/lib/rigd`), 'data_dir made, owned by rigd, 0750');
  t.ok(existsSync(path.join(b.root, 'var/lib/rigd')), 'data_dir exists');
  t.ok(res.calls.includes(`chown root:rigd ${b.root}/etc/rigd/config.yaml`) && res.calls.includes(`chmod 0640 ${b.root}/etc/rigd/config.yaml`), 'config.yaml root:rigd 0640');
  t.ok(res.calls.includes('deb-systemd-helper enable rigd.service'), 'unit enabled');
  t.ok(res.calls.includes('systemctl --system daemon-reload'), 'systemd reloaded');
  t.notOk(res.calls.some((c) => /^deb-systemd-invoke (start|restart) /.test(c)), 'not started: the config is the shipped template');
  t.ok(res.calls.includes('deb-systemd-invoke try-restart rigd.service'), 'only a running service is restarted');
  t.match(res.stderr, /not started: edit \/etc\/rigd\/config\.yaml/, 'says what to do');
  t.end();
});

test('postinst again (upgrade): idempotent, existing data_dir untouched; started once configured', (t) => {
  const b = box();
  run(b, 'postinst', 'configure', '');
  writeFileSync(path.join(b.root, 'var/lib/rigd/rigd.sqlite'), 'data');
  const again = run(b, 'postinst', 'configure', '0.1.0');
  t.equal(again.code, 0, 'exits 0');
  t.notOk(again.calls.some((c) => /^(adduser|addgroup) /.test(c)), 'the user is not made twice');
  t.notOk(again.calls.some((c) => c.startsWith('install ')), 'an existing data_dir is left as it is');
  t.equal(readFileSync(path.join(b.root, 'var/lib/rigd/rigd.sqlite'), 'utf8'), 'data', 'data kept');

  writeFileSync(path.join(b.root, 'etc/rigd/config.yaml'), 'vpn:\n  host: vpn.example.net\n');
  const edited = run(b, 'postinst', 'configure', '0.1.0');
  t.ok(edited.calls.includes('deb-systemd-invoke restart rigd.service'), 'an edited config.yaml: started (restarted)');
  t.equal(edited.stderr, '', 'no hint');

  const b2 = box();
  writeFileSync(path.join(b2.root, 'etc/rigd/rigd.env'), 'RIGD_STORAGE_MINIO_SECRET_KEY=x\n');
  t.ok(run(b2, 'postinst', 'configure', '').calls.includes('deb-systemd-invoke restart rigd.service'), 'a rigd.env with content: started');
  writeFileSync(path.join(b2.root, 'etc/rigd/rigd.env'), '');
  t.notOk(run(b2, 'postinst', 'configure', '').calls.includes('deb-systemd-invoke restart rigd.service'), 'an empty rigd.env does not count');

  const noSystemd = box();
  rmSync(path.join(noSystemd.root, 'run/systemd'), { recursive: true });
  const chroot = run(noSystemd, 'postinst', 'configure', '');
  t.ok(chroot.calls.includes('deb-systemd-helper enable rigd.service'), 'without a running systemd (chroot, image build): still enabled');
  t.notOk(chroot.calls.some((c) => c.startsWith('deb-systemd-invoke') || c.startsWith('systemctl')), 'and nothing is started');
  t.end();
});

test('prerm stops on remove only; postrm keeps data on remove, purge removes config and data', (t) => {
  const b = box();
  run(b, 'postinst', 'configure', '');
  t.ok(run(b, 'prerm', 'remove').calls.includes('deb-systemd-invoke stop rigd.service'), 'remove: stopped');
  t.deepEqual(run(b, 'prerm', 'upgrade', '0.2.0').calls, [], 'upgrade: not stopped (postinst restarts it)');

  writeFileSync(path.join(b.root, 'var/lib/rigd/rigd.sqlite'), 'data');
  writeFileSync(path.join(b.root, 'etc/rigd/rigd.env'), 'RIGD_INGEST_WEBHOOK_TOKEN=x\n');
  const removed = run(b, 'postrm', 'remove');
  t.equal(removed.code, 0);
  t.ok(removed.calls.includes('deb-systemd-helper mask rigd.service'), 'remove: unit masked');
  t.ok(existsSync(path.join(b.root, 'var/lib/rigd/rigd.sqlite')), 'remove: data kept');
  t.ok(existsSync(path.join(b.root, 'etc/rigd/rigd.env')), 'remove: env file kept');

  rmSync(path.join(b.root, 'etc/rigd/config.yaml')); // dpkg removes the conffile itself on purge
  const purged = run(b, 'postrm', 'purge');
  t.equal(purged.code, 0);
  t.ok(purged.calls.includes('deb-systemd-helper purge rigd.service'), 'purge: unit state purged');
  t.notOk(existsSync(path.join(b.root, 'var/lib/rigd')), 'purge: data_dir removed');
  t.notOk(existsSync(path.join(b.root, 'etc/rigd')), 'purge: /etc/rigd removed');
  t.notOk(purged.calls.some((c) => /^(deluser|userdel) /.test(c)), 'the rigd user stays');

  const linked = box();
  const elsewhere = path.join(path.dirname(linked.root), 'big-disk');
  mkdirSync(elsewhere);
  writeFileSync(path.join(elsewhere, 'rigd.sqlite'), 'data');
  symlinkSync(elsewhere, path.join(linked.root, 'var/lib/rigd'));
  run(linked, 'postrm', 'purge');
  t.ok(existsSync(path.join(elsewhere, 'rigd.sqlite')), 'purge: a data_dir symlinked to other storage is left alone');
  t.end();
});

test('the scripts name the env file the unit and the commands read', (t) => {
  for (const script of ['postinst', 'postrm']) {
    t.ok(readFileSync(path.join(SCRIPTS, script), 'utf8').includes(`"$ROOT${ENV_FILE}"`), `${script} uses ${ENV_FILE}`);
  }
  t.end();
});
