import { execFileSync } from 'node:child_process';

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
  /** Removes the user again if this test created it. */
  remove(): void;
}

function ids(name: string): { uid: number; gid: number } | null {
  try {
    return { uid: Number(execFileSync('id', ['-u', name], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', name], { encoding: 'utf8' })) };
  } catch {
    return null;
  }
}

/** A system user (no home, no login shell) for tests that need a non-root owner; needs root. */
export function systemUser(name: string): SystemUser {
  let found = ids(name);
  let created = false;
  if (!found) {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
    created = true;
    found = ids(name);
    if (!found) throw new Error(`useradd ${name} did not create the user`);
  }
  return {
    name,
    ...found,
    remove() {
      if (created) execFileSync('userdel', [name]);
      created = false;
    },
  };
}
