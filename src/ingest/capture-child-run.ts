/**
 * Runs the capture child (capture-child.ts) under supervision: forked with a heap cap, killed with
 * SIGKILL when the time is up or the caller aborts, its death before answering turned into a
 * rejection. Shared by the inspection (capture-file.ts) and the import (import.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AckMessage, ChildMessage, ChildRequest } from './capture-protocol.ts';
import { CaptureRejected } from './capture-rejected.ts';

export type ChildSuccess = Extract<ChildMessage, { type: 'result'; ok: true }>;

export interface ChildHooks {
  /** 'inspection' or 'import': names the work in messages. */
  what: string;
  onStep?: (step: string) => void;
  onStats?: (stats: { maxRssKb: number }) => void;
  onChild?: (pid: number) => void;
  /** Messages other than steps, stats and the result ('tables', 'batch'); reply sends to the child. */
  onMessage?: (msg: ChildMessage, reply: (m: AckMessage) => void) => void;
  signal?: AbortSignal;
  /** A descriptor the child inherits as SPOOL_FD (the import's spool file). */
  spoolFd?: number;
}

/** Child entry next to this module, with this module's extension (.ts under tsx, .js in dist/). */
function childEntry(): string {
  const self = fileURLToPath(import.meta.url);
  return path.join(path.dirname(self), `capture-child${path.extname(self)}`);
}

/** Node flags the child inherits (with their values): module loaders such as tsx's under tests. */
const INHERITED_WITH_VALUE = new Set(['--import', '--require', '-r', '--loader', '--experimental-loader', '--conditions', '-C']);
const INHERITED_ALONE = /^--(enable-source-maps|no-warnings|no-deprecation|disable-warning=|experimental-)/;

/**
 * The parent's loader flags plus the heap cap. Everything else is left out: --inspect would clash on
 * its port, and -e/-p/--input-type would make the child run the parent's script instead of its own.
 */
export function childExecArgv(parentArgv: readonly string[], memoryLimitMb: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < parentArgv.length; i++) {
    const a = parentArgv[i]!;
    const flag = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (INHERITED_WITH_VALUE.has(flag)) {
      if (flag === a && i + 1 < parentArgv.length) out.push(a, parentArgv[++i]!);
      else out.push(a);
    } else if (INHERITED_ALONE.test(a) && !a.startsWith('--experimental-default-type')) {
      out.push(a);
    }
  }
  out.push(`--max-old-space-size=${memoryLimitMb}`);
  return out;
}

export function abortError(what: string): Error {
  const err = new Error(`Capture ${what} was aborted.`);
  err.name = 'AbortError';
  return err;
}

/** Forks the child, sends it `request`, and settles with its result once it has exited. */
export function runChild(request: ChildRequest, timeoutMs: number, budgetMs: number, hooks: ChildHooks): Promise<ChildSuccess> {
  const { what } = hooks;
  const memoryLimitMb = request.memoryLimitMb;
  return new Promise((resolve, reject) => {
    let outcome: { ok: true; value: ChildSuccess } | { ok: false; error: Error } | undefined;
    let stderrTail = '';
    let started = false;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      const o = outcome!;
      if (o.ok) resolve(o.value);
      else reject(o.error);
    };
    let child: ChildProcess;
    try {
      child = fork(childEntry(), [], {
        execArgv: childExecArgv(process.execArgv, memoryLimitMb),
        stdio: hooks.spoolFd === undefined ? ['ignore', 'ignore', 'pipe', 'ipc'] : ['ignore', 'ignore', 'pipe', 'ipc', hooks.spoolFd],
        serialization: 'advanced',
      });
    } catch (err) {
      reject(err as Error);
      return;
    }

    const settle = (o: NonNullable<typeof outcome>) => {
      if (outcome) return;
      outcome = o;
      clearTimeout(timer);
      hooks.signal?.removeEventListener('abort', onAbort);
      // The answer is in (or the time is up): make sure the child is gone, and settle once it has exited.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    };
    const onAbort = () => settle({ ok: false, error: abortError(what) });
    const timer = setTimeout(() => {
      settle({
        ok: false,
        error: new CaptureRejected('timeout', `Capture ${what} did not finish within ${budgetMs} ms and was stopped.`),
      });
    }, timeoutMs);
    if (hooks.signal?.aborted) onAbort();
    else hooks.signal?.addEventListener('abort', onAbort, { once: true });
    if (child.pid !== undefined) {
      hooks.onChild?.(child.pid);
      // Queued on the IPC channel until the child listens; a dead child is reported by 'exit'.
      child.send(request, (err) => void err);
    }
    const reply = (m: AckMessage) => {
      if (!outcome && child.connected) child.send(m, (err) => void err);
    };

    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (s: string) => {
      stderrTail = (stderrTail + s).slice(-2000);
    });
    child.on('message', (raw: unknown) => {
      const msg = raw as ChildMessage;
      if (outcome || typeof msg !== 'object' || msg === null) return;
      if (msg.type === 'step') {
        if (msg.step === 'started') started = true;
        hooks.onStep?.(msg.step);
      } else if (msg.type === 'stats') {
        hooks.onStats?.({ maxRssKb: msg.maxRssKb });
      } else if (msg.type === 'result') {
        if (msg.ok) settle({ ok: true, value: msg });
        else if ('store' in msg) settle({ ok: false, error: new Error(msg.message) });
        else settle({ ok: false, error: new CaptureRejected(msg.reason, msg.message) });
      } else {
        hooks.onMessage?.(msg, reply);
      }
    });
    child.on('error', (err) => {
      // Spawn failure: no 'exit' follows. (A failed send to a dead child is reported by 'exit'.)
      if (child.pid === undefined) {
        settle({ ok: false, error: err });
        finish();
      }
    });
    child.on('exit', (code, signal) => {
      if (!outcome) {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        const err = started
          ? new CaptureRejected(
              'inspector_crashed',
              `Capture ${what} process ${how} before answering (it may have hit its ${memoryLimitMb} MiB memory cap).`,
            )
          : // Never got going: our problem (install, loader), not the file's. Retryable.
            new Error(`Capture ${what} process ${how} before it started: ${stderrTail.trim().split('\n').slice(-3).join(' | ')}`);
        (err as Error & { stderr?: string }).stderr = stderrTail;
        settle({ ok: false, error: err });
      }
      // Settle on 'exit' so that the child is gone when the caller continues.
      finish();
    });
  });
}
