// The Debian control area (control, md5sums, conffiles, maintainer scripts) and dpkg-deb.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, cpSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** No nodejs: the package carries its own runtime. The runtime and the addons need these. */
export const DEPENDS = 'adduser, libc6 (>= 2.34), libgcc-s1, libstdc++6';

export function walkFiles(dir, base = dir, out = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) walkFiles(p, base, out);
    else if (entry.isFile()) out.push(path.relative(base, p));
  }
  return out;
}

function duKiB(dir) {
  let bytes = 0;
  for (const f of walkFiles(dir)) bytes += Math.ceil(lstatSync(path.join(dir, f)).size / 1024) * 1024;
  return Math.ceil(bytes / 1024);
}

/** Writes DEBIAN/ into the stage and builds the package into out; returns its path. */
export function buildDeb(root, stage, { version, arch, maintainer, conffiles, epoch, out, fast }) {
  const debian = path.join(stage, 'DEBIAN');
  mkdirSync(debian, { mode: 0o755 });
  const files = walkFiles(stage).filter((f) => !f.startsWith('DEBIAN'));
  const md5 = files.sort().map((f) => `${createHash('md5').update(readFileSync(path.join(stage, f))).digest('hex')}  ${f}`);
  writeFileSync(path.join(debian, 'md5sums'), `${md5.join('\n')}\n`, { mode: 0o644 });
  writeFileSync(path.join(debian, 'conffiles'), conffiles.map((c) => `/${c}\n`).join(''), { mode: 0o644 });
  const control = [
    'Package: rigd',
    `Version: ${version}`,
    `Architecture: ${arch}`,
    `Maintainer: ${maintainer}`,
    `Installed-Size: ${duKiB(stage)}`,
    `Depends: ${DEPENDS}`,
    'Section: net',
    'Priority: optional',
    'Description: rig fleet service for a VPN gateway',
    ' rigd takes rig reports, hands out signed upload URLs, ingests capture',
    ' files into a capture store and gives operators a command line tool',
    ' (rigd) for users, rigs, uploads, captures and health checks.',
    ' .',
    ' It carries its own Node.js runtime (/usr/lib/rigd/node), so the system',
    ' needs none. The service runs as the rigd user under systemd',
    ' (rigd.service); its config is /etc/rigd/config.yaml, its secrets',
    ' /etc/rigd/rigd.env and its data /var/lib/rigd.',
  ];
  writeFileSync(path.join(debian, 'control'), `${control.join('\n')}\n`, { mode: 0o644 });
  for (const script of ['postinst', 'prerm', 'postrm']) {
    cpSync(path.join(root, 'packaging/deb', script), path.join(debian, script));
    chmodSync(path.join(debian, script), 0o755);
  }
  mkdirSync(out, { recursive: true });
  const deb = path.join(out, `rigd_${version}_${arch}.deb`);
  execFileSync('dpkg-deb', ['--root-owner-group', ...(fast ? ['-Zgzip', '-z1'] : ['-Zxz', '-z6']), '--build', stage, deb], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, SOURCE_DATE_EPOCH: String(epoch) },
  });
  return deb;
}
