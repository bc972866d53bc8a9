import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { ROOT } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';

function verify(file: string, ...opts: string[]) {
  return spawnSync('systemd-analyze', ['verify', ...opts, file], { encoding: 'utf8' });
}

test('systemd-analyze verify passes on rigd.service', (t) => {
  // ExecStart runs the Node runtime the Debian package carries (/usr/lib/rigd/node/bin/node): verify
  // checks that it exists, so a stub stands at its path. The manual pages Documentation= names come
  // with the package (test/package/deb.test.ts checks them there).
  const dir = tmpDir();
  mkdirSync(path.join(dir, 'node', 'bin'), { recursive: true });
  writeFileSync(path.join(dir, 'node', 'bin', 'node'), '#!/bin/sh\nexit 0\n');
  chmodSync(path.join(dir, 'node', 'bin', 'node'), 0o755);
  const unit = path.join(dir, 'rigd.service');
  writeFileSync(unit, readFileSync(path.join(ROOT, 'systemd', 'rigd.service'), 'utf8').replaceAll('/usr/lib/rigd/', `${dir}/`));
  const res = verify(unit, '--man=no');
  t.equal(res.error, undefined, 'systemd-analyze runs');
  t.equal(res.status, 0, `verify: ${res.stderr.trim() || 'clean'}`);
  t.equal(res.stderr.trim(), '', 'no warnings');
  t.end();
});

test('systemd-analyze verify passes on minio.service (with a stand-in minio binary)', (t) => {
  // verify checks that ExecStart exists; this machine has no MinIO binary, so a stub stands at its path.
  const dir = tmpDir();
  const stub = path.join(dir, 'minio');
  writeFileSync(stub, '#!/bin/sh\nexit 0\n');
  chmodSync(stub, 0o755);
  const unit = path.join(dir, 'minio.service');
  writeFileSync(unit, readFileSync(path.join(ROOT, 'systemd', 'minio.service'), 'utf8').replaceAll('/usr/local/bin/minio', stub));
  const res = verify(unit);
  t.equal(res.status, 0, `verify: ${res.stderr.trim() || 'clean'}`);
  t.equal(res.stderr.trim(), '', 'no warnings');
  const broken = path.join(dir, 'broken.service');
  copyFileSync(unit, broken);
  writeFileSync(broken, readFileSync(unit, 'utf8').replace('[Service]', '[Service]\nNoSuchDirective=1'));
  t.notEqual(verify(broken).stderr.trim(), '', 'an unknown directive is reported (the check can fail)');
  t.end();
});

test('rigd.service: the hardening the operator contract promises', (t) => {
  const unit = readFileSync(path.join(ROOT, 'systemd', 'rigd.service'), 'utf8');
  for (const line of [
    'User=rigd',
    'StateDirectory=rigd',
    'ConfigurationDirectory=rigd',
    'ProtectSystem=strict',
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'NoNewPrivileges=yes',
    'Restart=on-failure',
    'After=network-online.target minio.service',
  ]) {
    t.ok(unit.split('\n').includes(line), line);
  }
  t.ok(/^RestrictAddressFamilies=.*AF_INET6/m.test(unit), 'RestrictAddressFamilies');
  t.notOk(/^MemoryDenyWriteExecute=yes/m.test(unit), 'MemoryDenyWriteExecute stays off (V8)');
  const env = readFileSync(path.join(ROOT, 'systemd', 'minio.env.example'), 'utf8');
  t.match(env, /^MINIO_NOTIFY_WEBHOOK_ENDPOINT_RIGD=".*\/api\/v1\/webhooks\/capture_uploaded"$/m, 'MinIO webhook points at rigd');
  t.match(env, /^MINIO_NOTIFY_WEBHOOK_AUTH_TOKEN_RIGD=/m, 'with the shared token');
  t.end();
});

/** The lines of one [Section] of a unit file. */
function section(unit: string, name: string): string[] {
  const lines = unit.split('\n');
  const start = lines.indexOf(`[${name}]`);
  if (start < 0) return [];
  const end = lines.findIndex((l, i) => i > start && /^\[.*\]$/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

test('rigd.service: a failed start is restarted, with a rate limit; a bad config (exit 2) is not', (t) => {
  const unit = readFileSync(path.join(ROOT, 'systemd', 'rigd.service'), 'utf8');
  const service = section(unit, 'Service');
  const unitSection = section(unit, 'Unit');
  t.ok(service.includes('Restart=on-failure'), 'Restart=on-failure in [Service]');
  const restartSec = service.map((l) => /^RestartSec=(\d+)$/.exec(l)).find(Boolean);
  t.ok(restartSec && Number(restartSec[1]) >= 1, 'RestartSec of a second or more in [Service]');
  const interval = unitSection.map((l) => /^StartLimitIntervalSec=(\d+)$/.exec(l)).find(Boolean);
  const burst = unitSection.map((l) => /^StartLimitBurst=(\d+)$/.exec(l)).find(Boolean);
  t.ok(interval && burst, 'StartLimitIntervalSec and StartLimitBurst in [Unit] (systemd ignores them in [Service])');
  if (interval && burst && restartSec) {
    t.ok(Number(burst[1]) * Number(restartSec[1]) < Number(interval[1]), 'the limit can trip: burst x RestartSec fits in the interval');
  }
  t.ok(service.includes('RestartPreventExitStatus=2'), 'exit 2 (config) is not restarted');
  t.end();
});

test('rigd.service: systemd-analyze security --offline rates it 1.3 or better', (t) => {
  const res = spawnSync('systemd-analyze', ['security', '--offline=true', path.join(ROOT, 'systemd', 'rigd.service')], { encoding: 'utf8' });
  const m = /Overall exposure level for rigd\.service: (\d+\.\d+)/.exec(res.stdout);
  t.ok(m, `rating printed: ${m?.[0] ?? res.stderr.trim()}`);
  if (m) t.ok(Number(m[1]) <= 1.3, `exposure ${m[1]} <= 1.3`);
  t.end();
});
