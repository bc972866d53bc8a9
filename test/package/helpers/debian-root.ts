// A clean Debian root for installing the package for real: made with mmdebstrap from Debian's own
// archive (the variant "apt": the essential packages and apt, no nodejs), kept as a tarball in a
// cache for a day (RIGD_TEST_DEBIAN_ROOT_CACHE, default /var/cache/rigd-test/debian-roots) so that the
// SQLite and PostgreSQL runs of the suite, and the tests of one run, download it once. Each test
// unpacks its own copy, mounts /proc in it and runs commands there with chroot. Needs root.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const CACHE = process.env.RIGD_TEST_DEBIAN_ROOT_CACHE || '/var/cache/rigd-test/debian-roots';
const MAX_AGE_MS = 24 * 3600 * 1000;

/** The Debian mirror this machine's apt uses (what mmdebstrap fetches from), else deb.debian.org. */
export function debianMirror(): string {
  const files = ['/etc/apt/sources.list', ...(existsSync('/etc/apt/sources.list.d') ? readdirSync('/etc/apt/sources.list.d').map((f) => `/etc/apt/sources.list.d/${f}`) : [])];
  for (const file of files) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^\s*(?:URIs:|deb)\s+(?:\[[^\]]*\]\s+)?(https?:\/\/\S+\/debian)\/?(\s|$)/.exec(line);
      if (m) return m[1];
    }
  }
  return 'http://deb.debian.org/debian';
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The root's tarball, made when missing or a day old; null and the reason when mmdebstrap fails. */
export function rootTarball(suite: string): { tar: string | null; error: string } {
  mkdirSync(CACHE, { recursive: true });
  const tar = path.join(CACHE, `${suite}-amd64.tar`);
  if (existsSync(tar) && Date.now() - statSync(tar).mtimeMs < MAX_AGE_MS) return { tar, error: '' };
  const tmp = `${tar}.${process.pid}.tmp`;
  // The package lists stay in the root: `apt install ./rigd_*.deb` resolves adduser from them.
  const res = spawnSync('mmdebstrap', ['--variant=apt', '--format=tar', '--skip=cleanup/apt/lists', suite, tmp, debianMirror()], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    timeout: 1_800_000,
  });
  if (res.status !== 0) {
    rmSync(tmp, { force: true });
    return { tar: null, error: `${res.stderr ?? ''}${res.error?.message ?? ''}`.trim().split('\n').slice(-5).join('\n') };
  }
  renameSync(tmp, tar);
  return { tar, error: '' };
}

function envArgs(env: Record<string, string>): string[] {
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

const BASE_ENV = { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8', DEBIAN_FRONTEND: 'noninteractive' };

export class DebianRoot {
  private mounted = false;

  private constructor(readonly dir: string) {}

  /**
   * Unpacks the tarball into dir (which must not exist; its parent is removed with it by destroy())
   * with /proc mounted and the host's DNS.
   */
  static unpack(tar: string, dir: string): DebianRoot {
    mkdirSync(dir);
    const root = new DebianRoot(dir);
    const x = spawnSync('tar', ['-xf', tar, '-C', dir], { encoding: 'utf8' });
    if (x.status !== 0) throw new Error(`tar -xf ${tar}: ${x.stderr}`);
    const m = spawnSync('mount', ['-t', 'proc', 'proc', path.join(dir, 'proc')], { encoding: 'utf8' });
    if (m.status !== 0) throw new Error(`mount proc: ${m.stderr}`);
    root.mounted = true;
    rmSync(path.join(dir, 'etc/resolv.conf'), { force: true });
    copyFileSync('/etc/resolv.conf', path.join(dir, 'etc/resolv.conf'));
    return root;
  }

  /** A path inside the root, as seen from outside. */
  file(p: string): string {
    return path.join(this.dir, p);
  }

  private argv(args: string[], opts: { user?: string; env?: Record<string, string> }): string[] {
    return [...(opts.user ? [`--userspec=${opts.user}:${opts.user}`] : []), this.dir, '/usr/bin/env', '-i', ...envArgs({ ...BASE_ENV, ...opts.env }), ...args];
  }

  /** Runs a command inside the root (as root unless user is given) with a clean environment. */
  run(args: string[], opts: { user?: string; env?: Record<string, string>; input?: string; timeout?: number } = {}): Run {
    const res = spawnSync('chroot', this.argv(args, opts), { encoding: 'utf8', input: opts.input, maxBuffer: 64 << 20, timeout: opts.timeout ?? 600_000 });
    return { code: res.status, stdout: res.stdout ?? '', stderr: `${res.stderr ?? ''}${res.error ? res.error.message : ''}` };
  }

  /** A long-running command inside the root. */
  spawn(args: string[], opts: { user?: string; env?: Record<string, string> } = {}): ChildProcess {
    return spawn('chroot', this.argv(args, opts), { stdio: ['ignore', 'pipe', 'pipe'] });
  }

  /** Unmounts /proc and removes the root (never crossing into another file system). */
  destroy(): void {
    if (this.mounted) spawnSync('umount', ['-l', path.join(this.dir, 'proc')]);
    this.mounted = false;
    spawnSync('rm', ['-rf', '--one-file-system', path.dirname(this.dir)]);
  }
}
