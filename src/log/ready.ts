/**
 * The line `rigd serve` prints when it is ready, `rigd listening on http://HOST:PORT` (the operator
 * contract), and the first-user hint (in JSON, just before it). Where the log is JSON (stdout not a terminal, or log.format
 * json) they are log lines like every other, the address also as `url`, so that every line of the
 * stream parses; they are written whatever log.level says. On a terminal they stay plain text.
 */
import { fromPino, type Logger } from '../log.ts';
import type { LogFormat } from './format.ts';

export const NO_USERS_HINT = 'no users yet: add one with  rigd user add NAME --email EMAIL';

export function announceReady(log: Logger, format: LogFormat, url: string, noUsers: boolean, write: (text: string) => void = (t) => void process.stdout.write(t)): void {
  const ready = `rigd listening on ${url}`;
  if (format === 'pretty' || !log.pino) {
    write(`${ready}\n${noUsers ? `${NO_USERS_HINT}\n` : ''}`);
    return;
  }
  // A child at info: the ready line is the contract, not chatter that log.level may silence.
  const always = fromPino(log.pino.child({}, { level: 'info' }), () => log.flush?.());
  // The hint first: whoever waits for the ready line has the whole start-up once it arrives.
  if (noUsers) always.info(NO_USERS_HINT);
  always.info(ready, { url });
  // No flush here: stdout's buffered stream writes these at once, and a synchronous flush while its
  // own write is in flight would put the ready line before the hint.
}
