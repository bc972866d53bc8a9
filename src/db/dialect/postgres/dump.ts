import { spawn } from 'node:child_process';
import { chmodSync, closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { redactText } from '../../database-url.ts';
import { removeOnInterrupt } from '../../../temp-files.ts';

/** A pg_dump / pg_restore run: its arguments, its environment (the password) and how it prints. */
export interface PgToolCommand {
  tool: 'pg_dump' | 'pg_restore';
  args: string[];
  /** PGPASSWORD when the URL has one: it never goes on the command line. */
  env: Record<string, string>;
  /** The command as an operator types it, password left out (~/.pgpass or PGPASSWORD). */
  display: string;
}

/** url without its password (given to the tool in PGPASSWORD instead). */
function split(url: string): { dbname: string; env: Record<string, string> } {
  const u = new URL(url);
  const password = u.password ? decodeURIComponent(u.password) : '';
  u.password = '';
  u.searchParams.delete('password');
  return { dbname: u.toString(), env: password ? { PGPASSWORD: password } : {} };
}

const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

function command(tool: PgToolCommand['tool'], args: string[], env: Record<string, string>): PgToolCommand {
  return { tool, args, env, display: [tool, ...args].map(quote).join(' ') };
}

/** pg_dump of the whole database in the custom format (compressed; pg_restore reads it). */
export function pgDumpCommand(url: string, file: string): PgToolCommand {
  const { dbname, env } = split(url);
  return command('pg_dump', ['--format=custom', '--no-owner', `--file=${path.resolve(file)}`, `--dbname=${dbname}`], env);
}

/** pg_restore of such a dump over the database: rigd's objects dropped first, then made again. */
export function pgRestoreCommand(url: string, file: string): PgToolCommand {
  const { dbname, env } = split(url);
  return command('pg_restore', ['--clean', '--if-exists', '--no-owner', '--single-transaction', `--dbname=${dbname}`, path.resolve(file)], env);
}

/**
 * Runs cmd. Resolves with the size of the file written (pg_dump) or 0; rejects with the tool's last
 * line of error (password masked), or with code ENOENT when the tool is not installed.
 */
export function runPgTool(cmd: PgToolCommand, file: string): Promise<number> {
  return new Promise((resolve, reject) => {
    // A dump holds password hashes and session tokens: 0600 from the start (pg_dump keeps the mode of
    // the file it truncates), and again at the end for a file that was there before.
    const created = cmd.tool === 'pg_dump' && !existsSync(file);
    // Interrupted, a dump written under its final name would look like a backup: it goes.
    const done = created ? removeOnInterrupt(file) : () => undefined;
    if (created) closeSync(openSync(file, 'a', 0o600));
    const child = spawn(cmd.tool, cmd.args, { env: { ...process.env, ...cmd.env }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', (err) => {
      done();
      if (created) rmSync(file, { force: true });
      reject(err);
    });
    child.on('close', (code) => {
      done();
      if (code !== 0) {
        if (created) rmSync(file, { force: true });
        const last = stderr.trim().split('\n').pop() ?? '';
        return reject(new Error(`${cmd.tool} exited with ${code}: ${redactText(last, cmd.env.PGPASSWORD)}`));
      }
      if (cmd.tool === 'pg_dump') chmodSync(file, 0o600);
      resolve(cmd.tool === 'pg_dump' ? statSync(file).size : 0);
    });
  });
}
