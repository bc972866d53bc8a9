import { UsageError } from './fail.ts';

/** Reads all of stdin; the trailing newline (one) is not part of the password. */
export async function readPasswordStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (text === '') throw new UsageError('no password on standard input');
  return text;
}

/** Asks for a password on the terminal without echoing it. */
export async function promptPassword(question: string): Promise<string> {
  const { stdin, stderr } = process;
  if (!stdin.isTTY) throw new UsageError('no terminal to ask for a password: pass --password-stdin');
  stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener('data', onData);
      stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new UsageError('cancelled'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** --password-stdin, else a hidden prompt (twice when setting a new password). */
export async function obtainPassword(fromStdin: boolean, confirm: boolean): Promise<string> {
  if (fromStdin) return readPasswordStdin();
  const first = await promptPassword('Password: ');
  if (confirm && (await promptPassword('Repeat password: ')) !== first) throw new UsageError('the passwords differ');
  return first;
}
