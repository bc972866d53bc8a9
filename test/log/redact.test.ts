// The log's censoring (src/log/redact.ts) against pino's own redact option with the same paths,
// which it replaced: the same printed lines, the caller's objects untouched.
import test from 'tape';
import { pino } from 'pino';
import { CENSOR, maskFields, REDACT_PATHS } from '../../src/log/redact.ts';

function printed(obj: Record<string, unknown>, opts: { redact?: boolean; mask?: boolean }): string {
  let line = '';
  const p = pino(
    {
      base: null,
      timestamp: false,
      ...(opts.redact ? { redact: { paths: REDACT_PATHS, censor: CENSOR } } : {}),
      ...(opts.mask ? { formatters: { log: (o: Record<string, unknown>) => maskFields(o) } } : {}),
    },
    { write: (s: string) => (line = s) },
  );
  p.info(obj);
  return line;
}

const lines: Record<string, unknown>[] = [
  { msg: 'request', request_id: 'r1', method: 'PUT', path: '/api/v1/rigs/rig1', status: 200, duration_ms: 1.5, client: '10.144.1.2' },
  { msg: 'login', password: 'pw', token: 'tk', authorization: 'Bearer x', cookie: 'c=1', session_token: 's', webhook_token: 'w' },
  {
    msg: 'request',
    headers: { authorization: 'Bearer t', cookie: 'token=x', 'set-cookie': ['a=1'], 'x-amz-security-token': 'st', host: 'h' },
    query: { 'X-Amz-Signature': 'sig', 'X-Amz-Credential': 'cred', key: 'k', next: 'http://u:p@h/x' },
    payload: { login: 'ada', password: 'pw', new_password: 'n', current_password: 'c', data: { token: 't', keep: 1 } },
    response: { data: { token: 't', user: { id: 1 } }, success: true },
    response_headers: { 'set-cookie': ['token=abc'] },
  },
  { msg: 'config', storage: { secret_key: 'sk', access_key: 'ak', endpoint: 'https://k:pw@s3.local' }, server: { cookie_secret: 'cs' }, url: 'postgres://rigd:pw@db/rigd' },
  { msg: 'odd', list: [{ token: 'in an array: not a path' }], nothing: null, data: { token: 'not under payload' }, payload: { data: 'text' }, deep: { a: { token: 'two down' } } },
];

test('maskFields censors what pino redact censored with the same paths, and masks URL passwords', (t) => {
  for (const obj of lines) {
    const before = JSON.stringify(obj);
    const ours = printed(obj, { mask: true });
    const theirs = printed(JSON.parse(before) as Record<string, unknown>, { redact: true, mask: true });
    t.equal(ours, theirs, `${obj.msg as string}: the same line`);
    t.equal(JSON.stringify(obj), before, `${obj.msg as string}: the caller's object is unchanged`);
  }
  const line = printed(lines[2], { mask: true });
  for (const secret of ['Bearer t', 'token=x', 'a=1', '"st"', 'sig', 'cred', '"pw"', '"t"', 'token=abc', 'u:p@']) t.notOk(line.includes(secret), `${secret} is not printed`);
  t.ok(line.includes('"host":"h"') && line.includes('"login":"ada"') && line.includes('"keep":1'), 'the rest is printed as it was');
  t.end();
});

test('a line without secrets is passed through as it is', (t) => {
  const obj = lines[0];
  t.equal(maskFields(obj), obj, 'the same object, not a copy');
  t.end();
});
