// How systemd would start rigd.service, read from the unit a package installed: the ExecStart
// argv, the user, the working directory, the umask, and the environment (Environment= lines, then
// the EnvironmentFile=, whose variables win as in systemd).
export interface UnitExec {
  argv: string[];
  user: string;
  cwd: string;
  umask: string;
  env: Record<string, string>;
  /** The EnvironmentFile= path (a leading '-': may be missing). */
  envFile: string | null;
}

export function unitExec(unit: string): UnitExec {
  const lines = unit.split('\n').map((l) => l.trim());
  const value = (key: string) => lines.filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1));
  const [exec] = value('ExecStart');
  if (!exec) throw new Error('the unit has no ExecStart');
  const env: Record<string, string> = {};
  for (const assignment of value('Environment')) {
    const eq = assignment.indexOf('=');
    env[assignment.slice(0, eq)] = assignment.slice(eq + 1);
  }
  const [envFile] = value('EnvironmentFile');
  return {
    argv: exec.split(/\s+/),
    user: value('User')[0] ?? 'root',
    cwd: value('WorkingDirectory')[0] ?? '/',
    umask: value('UMask')[0] ?? '0022',
    env,
    envFile: envFile ? envFile.replace(/^-/, '') : null,
  };
}

/** KEY=VALUE lines of an environment file (comments and blank lines skipped, quotes removed). */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (m) out[m[1]] = m[2].replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1');
  }
  return out;
}
