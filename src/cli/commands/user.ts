import type { Command } from 'commander';
import type { PublicUser } from '../../services/auth/users.ts';
import { cliActor } from '../../services/audit/log.ts';
import { listUsers } from '../../services/auth/user-queries.ts';
import { printJson, withApp, withReader } from '../context.ts';
import { obtainPassword } from '../password-input.ts';
import { renderTable } from '../table.ts';
import { printLines } from '../terminal-text.ts';
import { dateText } from '../../services/date-text.ts';

interface AddOptions {
  email: string;
  passwordStdin?: boolean;
  admin?: boolean;
  json?: boolean;
}

function row(u: PublicUser) {
  return { id: u.id, username: u.username, email: u.email, admin: u.admin, created_at: u.created_at.toISOString() };
}

export async function userAdd(name: string, opts: AddOptions, cmd: Command): Promise<void> {
  // Name and email first: nobody types a password twice for a user that cannot be added.
  const user = await withApp(cmd, async (app) => {
    await app.users.checkNew({ username: name, email: opts.email });
    const password = await obtainPassword(Boolean(opts.passwordStdin), true);
    return app.users.create({ username: name, email: opts.email, password, admin: opts.admin }, { actor: cliActor() });
  });
  if (opts.json) printJson(row(user));
  else printLines(`added user ${user.username} (id ${user.id}${user.admin ? ', admin' : ''})`);
}

export async function userList(opts: { json?: boolean }, cmd: Command): Promise<void> {
  const users = await withReader(cmd, (reader) => listUsers(reader));
  if (opts.json) return printJson(users.map(row));
  if (users.length === 0) {
    process.stdout.write('no users: add one with  rigd user add NAME --email EMAIL\n');
    return;
  }
  const rows = users.map((u) => [u.id, u.username, u.email, u.admin ? 'yes' : '', dateText(u.created_at, 'utc-minute')]);
  process.stdout.write(renderTable(['ID', 'USERNAME', 'EMAIL', 'ADMIN', 'CREATED'], rows));
}

export async function userPasswd(name: string, opts: { passwordStdin?: boolean }, cmd: Command): Promise<void> {
  await withApp(cmd, async (app) => {
    await app.users.getByName(name);
    const password = await obtainPassword(Boolean(opts.passwordStdin), true);
    await app.users.setPassword(name, password, { actor: cliActor() });
  });
  printLines(`password changed for ${name}; their sessions were ended`);
}

export async function userRemove(name: string, _opts: unknown, cmd: Command): Promise<void> {
  await withApp(cmd, (app) => app.users.remove(name, { actor: cliActor() }));
  printLines(`removed user ${name}`);
}

export async function userSet(name: string, opts: { email?: string; admin?: boolean; json?: boolean }, cmd: Command): Promise<void> {
  const user = await withApp(cmd, (app) => app.users.set(name, { email: opts.email, admin: opts.admin }, { actor: cliActor() }));
  if (opts.json) printJson(row(user));
  else printLines(`user ${user.username}: email ${user.email}, ${user.admin ? 'admin' : 'not admin'}`);
}

export async function userUnlock(name: string, opts: { json?: boolean }, cmd: Command): Promise<void> {
  const cleared = await withApp(cmd, (app) => app.users.unlock(name, { actor: cliActor() }));
  if (opts.json) printJson({ username: name, failures_cleared: cleared });
  else printLines(`unlocked ${name}: ${cleared} failed login${cleared === 1 ? '' : 's'} cleared`);
}
