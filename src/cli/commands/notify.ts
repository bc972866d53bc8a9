import type { Command } from 'commander';
import { DomainError } from '../../errors.ts';
import { configFor, printJson } from '../context.ts';
import { printLines } from '../terminal-text.ts';

/** A target that did not take the test message: exit 1 (the lines above say which and what it answered). */
class TestFailed extends DomainError {
  constructor(failed: number, total: number) {
    super('unprocessable', 'notify_test_failed', `${failed} of ${total} notification target${total === 1 ? '' : 's'} failed`);
  }
}

/** Nothing to send to: exit 1, naming the keys to set. */
class NoTargets extends DomainError {
  constructor(what: string) {
    super('unprocessable', 'no_notify_targets', `no ${what} configured: set ${what === 'e-mail' ? 'notify.email.smtp_url, from and to' : what === 'webhook' ? 'notify.webhooks' : 'notify.webhooks or notify.email'} (see docs/notifications.md)`);
  }
}

/** `rigd notify test [--webhook|--email] [--json]`: one test message to each target now; exit 1 if any failed. */
export async function notifyTestCommand(opts: { webhook?: boolean; email?: boolean; json?: boolean }, cmd: Command): Promise<void> {
  const config = await configFor(cmd);
  const only = opts.webhook && !opts.email ? 'webhook' : opts.email && !opts.webhook ? 'email' : undefined;
  const { sendTest } = await import('../../services/notify/test-send.ts');
  const results = await sendTest(config, only);
  if (results.length === 0) throw new NoTargets(only === 'email' ? 'e-mail' : (only ?? 'notification target'));
  if (opts.json) printJson(results.map(({ type, target, delivery, ok, text }) => ({ type, target, delivery, ok, answer: text })));
  else for (const r of results) printLines(`${r.ok ? 'ok  ' : 'fail'}  ${r.target}: ${r.text}`);
  const failed = results.filter((r) => !r.ok).length;
  if (failed > 0) throw new TestFailed(failed, results.length);
}
