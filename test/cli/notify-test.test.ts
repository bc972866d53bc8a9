// test: alone (a webhook that does not answer within the 5 s timeout)
// `rigd notify test [--webhook|--email] [--json]` as a child process against a real HTTP receiver,
// a real SMTP relay, a dead port and a slow receiver: what each answered, exit 1 if any failed.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { stringify } from 'yaml';
import { rigd } from '../helpers/cli.ts';
import { tmpDir } from '../helpers/tmp.ts';
import { signatureValid, startHttpSink, startSmtpSink, type HttpSink, type SmtpSink } from '../services/notify/sinks.ts';

const SECRET = 'whsec-cli-c9f0f895fb98ab9159f51fd0297e236d';
const SMTP_PASSWORD = 'relay-cli-45c48cce2e2d7fbdea1afc51c7c6ad26';

function run(notify: Record<string, unknown>, args: string[], env: Record<string, string> = {}) {
  const dir = tmpDir('rigd-notify-cli-');
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, stringify({ notify }));
  return rigd(['--config', file, 'notify', 'test', ...args], { env: { RIGD_DATA_DIR: dir, RIGD_ENV_FILE: '', ...env }, timeoutMs: 60_000 });
}

let http: HttpSink;
let smtp: SmtpSink;

test('setup: receivers', async () => {
  http = await startHttpSink();
  smtp = await startSmtpSink();
});

test('both sinks: one test message each, now, with what each answered; exit 0', async (t) => {
  const notify = {
    webhooks: [{ url: http.url('/hooks/a') }],
    email: { smtp_url: `smtp://rigd:${SMTP_PASSWORD}@127.0.0.1:${smtp.port}`, from: 'rigd@gw.example', to: ['ops@example.com'] },
  };
  const before = { hooks: http.received.length, mails: smtp.mails.length };
  const r = await run(notify, [], { RIGD_NOTIFY_WEBHOOKS_0_SECRET: SECRET });
  t.equal(r.code, 0, `exit 0 (stderr: ${r.stderr.trim()})`);
  t.match(r.stdout, new RegExp(`^ok +webhook 0 http://${http.host.replace(/\./g, '\\.')}:${http.port}/…: 200 ok$`, 'm'), 'the webhook: status and first line of the body');
  t.match(r.stdout, /^ok +email smtp:\/\/127\.0\.0\.1:\d+ to ops@example\.com: 250 /m, 'the e-mail: the relay\'s answer');
  t.equal(http.received.length, before.hooks + 1, 'the receiver got one request');
  const got = http.received[http.received.length - 1];
  t.ok(signatureValid(got, SECRET), 'signed with the secret from the environment');
  const body = JSON.parse(got.body.toString());
  t.equal(body.incident.kind, 'test', 'incident kind "test"');
  t.match(body.text, /rigd test notification/, 'with a Slack-readable text');
  t.equal(smtp.mails.length, before.mails + 1, 'the relay got one mail');
  t.match(smtp.mails[smtp.mails.length - 1].header('Subject') ?? '', /\[rigd\] test: opened/, 'subject');
  t.notOk(`${r.stdout}${r.stderr}`.includes(SMTP_PASSWORD) || `${r.stdout}${r.stderr}`.includes(SECRET), 'no secret printed');
});

test('--webhook / --email: only those; --json: JSON only', async (t) => {
  const notify = { webhooks: [http.url('/hooks/b')], email: { smtp_url: `smtp://127.0.0.1:${smtp.port}`, from: 'rigd@gw.example', to: 'ops@example.com' } };
  const hooks = http.received.length;
  const mails = smtp.mails.length;
  const w = await run(notify, ['--webhook']);
  t.equal(w.code, 0, '--webhook: exit 0');
  t.equal(w.stdout.trim().split('\n').length, 1, 'one line');
  t.equal(http.received.length, hooks + 1, 'the webhook got it');
  t.equal(smtp.mails.length, mails, 'no mail');
  const e = await run(notify, ['--email', '--json']);
  t.equal(e.code, 0, '--email --json: exit 0');
  const parsed = JSON.parse(e.stdout);
  t.equal(parsed.length, 1, 'one result');
  t.equal(parsed[0].type, 'email', 'the e-mail');
  t.equal(parsed[0].ok, true, 'ok');
  t.match(parsed[0].answer, /^250 /, 'the relay\'s answer');
  t.equal(smtp.mails.length, mails + 1, 'one mail');
  t.equal(http.received.length, hooks + 1, 'no webhook');
});

test('a dead port, a 410, a slow receiver: fail lines, exit 1', async (t) => {
  const dead = await startHttpSink();
  await dead.down();
  http.statusFor = (p) => (p === '/gone' ? 410 : 200);
  const slow = await startHttpSink();
  // timeout_s 5 (not 1): the live receiver, in this busy process, must answer within it too.
  slow.delayMs = 10_000;
  try {
    const r = await run(
      { webhooks: [http.url('/ok'), dead.url('/x'), http.url('/gone'), slow.url('/slow')], email: { smtp_url: `smtp://127.0.0.1:${dead.port}`, from: 'rigd@gw.example', to: 'ops@example.com' }, timeout_s: 5 },
      [],
    );
    t.equal(r.code, 1, 'exit 1');
    t.match(r.stdout, /^ok +webhook 0 .*: 200 ok$/m, 'the live one: ok');
    t.match(r.stdout, /^fail +webhook 1 .*: .*ECONNREFUSED/m, 'the dead port: connection refused');
    t.match(r.stdout, /^fail +webhook 2 .*: 410 gone for good$/m, 'the 410: its status and first line');
    t.match(r.stdout, /^fail +webhook 3 .*: no answer within 5 s$/m, 'the slow one: no answer within the timeout');
    t.match(r.stdout, /^fail +email smtp:\/\/127\.0\.0\.1:\d+ to ops@example\.com: .*ECONNREFUSED/m, 'the relay on a dead port');
    t.match(r.stderr, /^rigd: 4 of 5 notification targets failed$/m, 'one line on stderr');
  } finally {
    http.statusFor = () => 200;
    await slow.close();
  }
});

test('nothing configured: exit 1 naming the keys to set', async (t) => {
  const r = await run({}, []);
  t.equal(r.code, 1, 'exit 1');
  t.match(r.stderr, /^rigd: no notification target configured: set notify\.webhooks or notify\.email/m, 'says what to set');
  const e = await run({ webhooks: [http.url('/x')] }, ['--email']);
  t.equal(e.code, 1, '--email without e-mail: exit 1');
  t.match(e.stderr, /no e-mail configured: set notify\.email\.smtp_url/, 'says so');
});

test('teardown', async () => {
  await http.close();
  await smtp.close();
});
