import { randomBytes } from 'node:crypto';
import { statfs, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { errorText, fail, ok, warn, type Finding } from './doctor-finding.ts';

/** Free space below which doctor warns, and below which it fails. */
export const WARN_FREE_BYTES = 2 * 1024 ** 3;
export const FAIL_FREE_BYTES = 256 * 1024 ** 2;

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/** data_dir exists, takes a write, and has room. */
export async function checkDataDir(dataDir: string): Promise<Finding[]> {
  const dir = path.resolve(dataDir);
  const probe = path.join(dir, `.doctor-${randomBytes(6).toString('hex')}`);
  try {
    await writeFile(probe, 'rigd doctor\n', { flag: 'wx' });
    await unlink(probe);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const fix =
      code === 'ENOENT'
        ? `create it: install -d -o rigd -g rigd -m 0750 ${dir} (systemd's StateDirectory=rigd does this for /var/lib/rigd)`
        : code === 'EROFS'
          ? `${dir} is on a read-only file system: point data_dir at a writable one (with ProtectSystem=strict, only StateDirectory is writable)`
          : `give the rigd user write access: chown -R rigd:rigd ${dir}`;
    return [fail('data_dir', `${dir} is not writable (${code ?? errorText(err)})`, fix)];
  }
  try {
    const st = await statfs(dir);
    const free = Number(st.bavail) * Number(st.bsize);
    if (free < FAIL_FREE_BYTES) return [fail('data_dir', `${dir} is writable but only ${gib(free)} is free`, 'free space on that file system (old captures, journal) or move data_dir')];
    if (free < WARN_FREE_BYTES) return [warn('data_dir', `${dir} is writable; only ${gib(free)} free`, 'free space soon: uploads and captures stop when the disk fills')];
    return [ok('data_dir', `${dir} is writable, ${gib(free)} free`)];
  } catch (err) {
    return [warn('data_dir', `${dir} is writable; free space unknown (${errorText(err)})`, 'check it with df')];
  }
}

/** Some interface of this host holds an IPv4 address inside vpn.cidr (else rigs cannot reach rigd). */
export function checkVpnInterface(cidr: string, interfaces = os.networkInterfaces()): Finding {
  const range = ipaddr.IPv4.parseCIDR(cidr);
  for (const [name, addrs] of Object.entries(interfaces)) {
    for (const a of addrs ?? []) {
      if (a.family !== 'IPv4' || !ipaddr.IPv4.isValid(a.address)) continue;
      if (ipaddr.IPv4.parse(a.address).match(range)) return ok('vpn', `${name} holds ${a.address} in vpn.cidr ${cidr}`);
    }
  }
  return fail('vpn', `no interface holds an address in vpn.cidr ${cidr}`, 'bring the VPN up (e.g. systemctl start wg-quick@wg0), or set vpn.cidr to the VPN\'s range');
}
