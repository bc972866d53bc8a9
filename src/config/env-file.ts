/**
 * The service's environment file, read by every command too. rigd.service loads it with
 * `EnvironmentFile=-/etc/rigd/rigd.env` (secrets such as RIGD_STORAGE_MINIO_SECRET_KEY live there,
 * not in the YAML); a command run from a shell reads the same file so that it sees the same config.
 * The file is parsed as systemd parses an EnvironmentFile; only its RIGD_* variables are used, and a
 * variable already in the real environment wins over the file.
 */
import { readFileSync } from 'node:fs';
import { EnvFileError } from '../errors.ts';

/** The one path of the environment file: the unit's EnvironmentFile= and the package use it too. */
export const ENV_FILE = '/etc/rigd/rigd.env';

/**
 * The environment file to read: $RIGD_ENV_FILE when set (empty: none, as in rigd.service, where
 * systemd has already loaded the file), else ENV_FILE.
 */
export function envFilePath(env: NodeJS.ProcessEnv): string | null {
  const named = env.RIGD_ENV_FILE;
  if (named === undefined) return ENV_FILE;
  return named === '' ? null : named;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WS = ' \t\r\f\v';

/**
 * Parses systemd EnvironmentFile syntax: KEY=VALUE lines; `#` or `;` starts a comment line;
 * 'single quotes' are literal; "double quotes" take \" \\ \` \$ escapes; outside quotes a backslash
 * escapes the next character; a backslash at the end of a line continues the value; quoted values
 * may span lines; trailing blanks of an unquoted value are dropped. Lines without `=` and invalid
 * names are skipped (systemd skips them too). A later assignment wins.
 */
export function parseEnvFile(text: string): Map<string, string> {
  const out = new Map<string, string>();
  type State = 'preKey' | 'key' | 'preValue' | 'value' | 'valueEsc' | 'single' | 'double' | 'doubleEsc' | 'comment' | 'commentEsc';
  let state: State = 'preKey';
  let key = '';
  let value = '';
  /** Length of value up to its last character that is not an unquoted trailing blank. */
  let kept = 0;
  const push = () => {
    const name = key.trim();
    if (NAME.test(name)) out.set(name, value.slice(0, kept));
    key = '';
    value = '';
    kept = 0;
  };
  for (const c of `${text}\n`) {
    switch (state) {
      case 'preKey':
        if (c === '#' || c === ';') state = 'comment';
        else if (!WS.includes(c) && c !== '\n') {
          key = c;
          state = 'key';
        }
        break;
      case 'key':
        if (c === '\n') {
          key = '';
          state = 'preKey';
        } else if (c === '=') state = 'preValue';
        else key += c;
        break;
      case 'preValue':
      case 'value':
        if (c === '\n') {
          push();
          state = 'preKey';
        } else if (c === "'") state = 'single';
        else if (c === '"') state = 'double';
        else if (c === '\\') state = 'valueEsc';
        else if (state === 'value' || !WS.includes(c)) {
          value += c;
          if (!WS.includes(c)) kept = value.length;
          state = 'value';
        }
        break;
      case 'valueEsc':
        if (c !== '\n') {
          value += c;
          kept = value.length;
        }
        state = 'value';
        break;
      case 'single':
        if (c === "'") state = 'preValue';
        else value += c;
        kept = value.length;
        break;
      case 'double':
        if (c === '"') state = 'preValue';
        else if (c === '\\') state = 'doubleEsc';
        else value += c;
        kept = value.length;
        break;
      case 'doubleEsc':
        if ('"\\`$'.includes(c)) value += c;
        else if (c !== '\n') value += `\\${c}`;
        kept = value.length;
        state = 'double';
        break;
      case 'comment':
        if (c === '\\') state = 'commentEsc';
        else if (c === '\n') state = 'preKey';
        break;
      case 'commentEsc':
        state = 'comment';
        break;
    }
  }
  return out;
}

function unreadable(file: string, err: NodeJS.ErrnoException): EnvFileError {
  const code = err.code ?? String(err);
  if ((code === 'EACCES' || code === 'EPERM') && process.getuid?.() !== 0) {
    return new EnvFileError(`cannot read ${file} (permission denied), which holds the service's settings and secrets: run with sudo`, file);
  }
  if (code === 'ENOENT') return new EnvFileError(`RIGD_ENV_FILE names ${file}, which does not exist`, file);
  return new EnvFileError(`cannot read ${file}: ${code}`, file);
}

/**
 * The environment with the env file's RIGD_* variables added where the environment lacks them.
 * No file at the default path is fine; a file that exists but cannot be read throws EnvFileError
 * with one line saying what to do (commands would otherwise run without the service's secrets).
 */
export function withEnvFile(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const file = envFilePath(env);
  if (!file) return env;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT' && env.RIGD_ENV_FILE === undefined) return env;
    throw unreadable(file, e);
  }
  const merged: NodeJS.ProcessEnv = { ...env };
  for (const [name, value] of parseEnvFile(text)) {
    if (name.startsWith('RIGD_') && name !== 'RIGD_ENV_FILE' && merged[name] === undefined) merged[name] = value;
  }
  return merged;
}
