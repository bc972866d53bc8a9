import { constants } from 'node:fs';
import { access, statfs } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import ipaddr from 'ipaddr.js';
import { readOnlyMount } from '../../db/read-only-mount.ts';
import { errorText, fail, ok, warn, type Finding } from './finding.ts';

/** Free space below which doctor warns, and below which it fails. */
export const WARN_FREE_BYTES = 2 * 1024 ** 3;
export const FAIL_FREE_BYTES = 256 * 1024 ** 2;

function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

/**
 * data_dir exists, is not on a read-only mount (/proc/self/mountinfo), may be written (asked with
 * access(2), so doctor writes nothing), and has room.
 */
export async function checkDataDir(dataDir: string): Promise<Finding[]> {
  const dir = path.resolve(dataDir);
  // The mount's flags first: a file system the kernel made read-only after an error (ext4
  // errors=remount-ro) may still answer access(2) as writable for a while.
  const ro = readOnlyMount(dir);
  if (ro) {
    return [
      fail(
        'data_dir',
        `${dir} is on a read-only file system (${ro.mountPoint} on ${ro.source}, ${ro.fsType}): rigd cannot store anything`,
        `if the kernel remounted it after an error, check the disk (dmesg; fsck ${ro.source}) and replace it if it is failing; then remount it read-write (mount -o remount,rw ${ro.mountPoint}) and restart rigd`,
      ),
    ];
  }
  try {
    await access(dir, constants.W_OK | constants.X_OK);
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

/**
 * data_dir's file system has at least server.min_free_mb free: below it /healthz fails and writes
 * answer 503 disk_full (a warning: rigd keeps what it has and resumes once space is freed).
 */
export async function checkDiskSpace(dataDir: string, minFreeMb: number): Promise<Finding> {
  const dir = path.resolve(dataDir);
  let free: number;
  try {
    const st = await statfs(dir);
    free = Number(st.bavail) * Number(st.bsize);
  } catch (err) {
    return warn('disk_space', `free space of ${dir} unknown (${errorText(err)})`, `check it with df -h ${dir}`);
  }
  const mib = Math.floor(free / 1024 ** 2);
  if (free < minFreeMb * 1024 ** 2) {
    return warn(
      'disk_space',
      `${mib} MiB free on the file system of ${dir}, under server.min_free_mb (${minFreeMb}): rigd refuses writes (503 disk_full) and /healthz fails`,
      `free space there (df -h ${dir}; journalctl --vacuum-size=200M; old backups), or move data_dir to a larger file system`,
    );
  }
  return ok('disk_space', `${mib} MiB free on the file system of ${dir} (server.min_free_mb: ${minFreeMb})`);
}
