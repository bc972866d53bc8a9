/**
 * Files a command is still writing that must not outlive it half-written: a backup's temp copy, an
 * export's temp file, a pg_dump written under its final name. While any is registered, SIGINT,
 * SIGTERM and SIGHUP (Ctrl-C, a closed ssh session: node ends on SIGHUP even under nohup) remove
 * them, then the process ends by that signal as it would have: Ctrl-C mid-way leaves nothing
 * behind. Only one-shot commands use this.
 */
import { rmSync } from 'node:fs';

const pending = new Set<string>();
const SIGNALS: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function onSignal(signal: NodeJS.Signals): void {
  for (const file of pending) rmSync(file, { force: true });
  pending.clear();
  listen(false);
  process.kill(process.pid, signal);
}

function listen(on: boolean): void {
  for (const s of SIGNALS) {
    if (on) process.on(s, onSignal);
    else process.off(s, onSignal);
  }
}

/** Removes `files` if the process is interrupted before the returned function is called. */
export function removeOnInterrupt(...files: string[]): () => void {
  if (pending.size === 0) listen(true);
  for (const file of files) pending.add(file);
  return () => {
    for (const file of files) pending.delete(file);
    if (pending.size === 0) listen(false);
  };
}
