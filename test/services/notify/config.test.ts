// The notify.* keys: defaults, webhook entries and their secrets from the environment (file), and
// one clear line for each wrong value, never showing a secret.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import test from 'tape';
import { loadConfig } from '../../../src/config/load.ts';
import { tmpDir } from '../../helpers/tmp.ts';

function configFile(yaml: string): string {
  const file = path.join(tmpDir('rigd-notify-config-'), 'config.yaml');
  writeFileSync(file, yaml);
  return file;
}

test('defaults: no targets, 24 h of retries', (t) => {
  const { notify } = loadConfig({ env: {} }).config;
  t.deepEqual(notify.webhooks, [], 'no webhooks');
  t.equal(notify.email.smtp_url, '', 'no e-mail');
  t.deepEqual(notify.email.events, ['*'], 'e-mail would take every kind');
  t.equal(notify.retry_hours, 24, 'retry_hours 24');
  t.end();
});

test('webhook secrets and URLs from the environment (file), per entry', (t) => {
  const file = configFile('notify:\n  webhooks:\n    - url: http://127.0.0.1:8080/a\n      events: [rig_offline]\n    - http://10.0.0.5/b\n');
  const plain = loadConfig({ file, env: {} }).config.notify.webhooks;
  t.deepEqual(plain, [
    { url: 'http://127.0.0.1:8080/a', secret: '', events: ['rig_offline'] },
    { url: 'http://10.0.0.5/b', secret: '', events: ['*'] },
  ], 'an entry, or a bare URL (every kind, no secret)');
  const env = { RIGD_NOTIFY_WEBHOOKS_0_SECRET: 's0', RIGD_NOTIFY_WEBHOOKS_1_SECRET: 's1', RIGD_NOTIFY_WEBHOOKS_2_SECRET: 's2', RIGD_NOTIFY_WEBHOOKS_2_URL: 'https://hooks.slack.example/services/T/B/x' };
  const hooks = loadConfig({ file, env }).config.notify.webhooks;
  t.deepEqual(hooks.map((h) => h.secret), ['s0', 's1', 's2'], 'RIGD_NOTIFY_WEBHOOKS_<N>_SECRET sets the N-th secret');
  t.equal(hooks[0].events[0], 'rig_offline', 'the rest of the entry kept');
  t.equal(hooks[2].url, 'https://hooks.slack.example/services/T/B/x', '_URL adds an entry');
  t.equal(loadConfig({ file, env: { RIGD_NOTIFY_WEBHOOKS_5_SECRET: 'x' } }).config.notify.webhooks.length, 2, 'a secret for no entry adds none');
  const fromList = loadConfig({ env: { RIGD_NOTIFY_WEBHOOKS: 'http://127.0.0.1:1/a,http://127.0.0.1:1/b', RIGD_NOTIFY_WEBHOOKS_1_SECRET: 'k' } }).config.notify.webhooks;
  t.deepEqual(fromList.map((h) => [h.url, h.secret]), [['http://127.0.0.1:1/a', ''], ['http://127.0.0.1:1/b', 'k']], 'RIGD_NOTIFY_WEBHOOKS=url,url, secrets per entry');
  const envDir = tmpDir('rigd-notify-env-');
  const envFile = path.join(envDir, 'rigd.env');
  writeFileSync(envFile, 'RIGD_NOTIFY_WEBHOOKS_0_SECRET=from-the-env-file\nRIGD_NOTIFY_EMAIL_SMTP_URL=smtp://rigd:p%40ss@relay.example:25\n');
  const viaFile = loadConfig({ file: configFile('notify:\n  webhooks: [http://127.0.0.1:8080/a]\n  email:\n    from: rigd@gw.example\n    to: ops@example.com\n'), env: { RIGD_ENV_FILE: envFile } }).config.notify;
  t.equal(viaFile.webhooks[0].secret, 'from-the-env-file', 'the env file (/etc/rigd/rigd.env) sets a webhook secret');
  t.equal(viaFile.email.smtp_url, 'smtp://rigd:p%40ss@relay.example:25', 'and the SMTP URL with its password');
  t.end();
});

test('wrong notify values: one line naming the key, no secret shown', (t) => {
  const cases: [string, RegExp][] = [
    ['notify:\n  webhooks:\n    - url: ftp://relay/x\n', /config: notify\.webhooks\[0\]\.url: .*has scheme ftp, not http or https/],
    ['notify:\n  webhooks:\n    - url: http://user:pw@relay/x\n', /notify\.webhooks\[0\]\.url: .*carries a user name or password/],
    ['notify:\n  webhooks:\n    - url: http://relay/x\n      events: [Rig-Offline]\n', /notify\.webhooks\[0\]\.events\[0\]: .*incident kind/],
    ['notify:\n  email:\n    smtp_url: smtp://u:hunter22@relay:25\n    from: rigd@gw.example\n', /config: notify\.email\.to: \[\] is empty while notify\.email\.smtp_url is set/],
    ['notify:\n  email:\n    smtp_url: smtp://u:hunter22@relay:25\n    to: ops@example.com\n', /config: notify\.email\.from: "" is empty while notify\.email\.smtp_url is set/],
    ['notify:\n  email:\n    smtp_url: http://u:hunter22@relay:25\n', /config: notify\.email\.smtp_url: .*has scheme http, not smtp or smtps/],
    ['notify:\n  email:\n    to: [not-an-address]\n', /config: notify\.email\.to\[0\]: /],
    ['notify:\n  retry_hours: 0\n', /config: notify\.retry_hours: 0 /],
  ];
  for (const [yaml, message] of cases) {
    let line = '';
    try {
      loadConfig({ file: configFile(yaml), env: {} });
    } catch (err) {
      line = String(err);
    }
    t.match(line, message, JSON.stringify(yaml));
    t.notOk(/hunter22|:pw@/.test(line), 'no password shown');
  }
  let line = '';
  try {
    loadConfig({ file: configFile('notify:\n  webhooks:\n    - url: http://relay/x\n      secret: 7\n'), env: { RIGD_NOTIFY_WEBHOOKS_0_SECRET: 'x'.repeat(2000) } });
  } catch (err) {
    line = String(err);
  }
  t.match(line, /notify\.webhooks\[0\]\.secret: \(hidden, 2000 characters\).*\(from RIGD_NOTIFY_WEBHOOKS_0_SECRET\)/, 'a bad secret: hidden, its source named');
  t.end();
});
